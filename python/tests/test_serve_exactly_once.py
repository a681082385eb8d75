"""`tokenfeed serve` exactly once under faults (markers: kafka, kafka_cluster).

A three-broker loopback cluster, numbered documents produced continuously to
a 4-partition raw topic, two serve instances of one group writing a
2-partition token topic, and a seeded schedule of faults (kill -9 and
SIGSTOP/SIGCONT of an instance, kill -9 and restart of the broker leading a
raw or token partition). Then every broker and instance heals, the instances
drain the raw topic and stop, and the checker (exactly_once_checker.py) reads
both topics read_committed: each raw message has exactly one record with the
ids of its text, nothing else is there, each raw partition's order holds, and
the records of aborted transactions stay hidden.

The CI form runs 4 faults in about a minute of faults. The long form:
  TOKENFEED_EO_FAULTS=40 TOKENFEED_EO_SECONDS=900 TOKENFEED_EO_SEED=7 \
  TOKENFEED_EO_RATE=300 pytest -s python/tests/test_serve_exactly_once.py
TOKENFEED_EO_REPORT=FILE writes the figures as JSON.
"""

from __future__ import annotations

import json
import os
import threading
import time

import pytest

from cli_helpers import cli, deepseek, records
from exactly_once_checker import Feeder, Nemesis, Report, ServeInstance, Supervisor, analyse, check, \
    committed_offsets, document_text, schedule, three_node_cluster
from kafka_helpers import LocalKafka, confluent, create_topic

FAULTS = int(os.environ.get("TOKENFEED_EO_FAULTS", "4"))
SECONDS = float(os.environ.get("TOKENFEED_EO_SECONDS", "75"))
SEED = int(os.environ.get("TOKENFEED_EO_SEED", "14"))
RATE = float(os.environ.get("TOKENFEED_EO_RATE", "150"))
RAW_PARTITIONS, OUT_PARTITIONS = 4, 2


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    yield from three_node_cluster(tmp_path_factory, "eo-cluster")


@pytest.mark.kafka
@pytest.mark.kafka_cluster
def test_serve_is_exactly_once_under_instance_and_broker_faults(cluster, tmp_path):
    confluent()
    import tokenfeed
    tok = tokenfeed.Tokenizer.from_file(deepseek())
    started = time.monotonic()
    raw, tokens = LocalKafka.new_topic("eo-raw"), LocalKafka.new_topic("eo-tokens")
    create_topic(cluster.bootstrap, raw, RAW_PARTITIONS, {"min.insync.replicas": "2"}, replication=3)
    create_topic(cluster.bootstrap, tokens, OUT_PARTITIONS, {"min.insync.replicas": "2"}, replication=3)
    group = f"eo-{raw}"
    args = [str(a) for a in [
        cli(), "serve", "--from", cluster.uri(raw), "--to", cluster.uri(tokens), "--tokenizer", deepseek(),
        "--group", group, "--no-create", "--partitions", OUT_PARTITIONS, "--log-interval-s", "5",
        "--commit-interval-ms", "200", "--kafka-timeout-ms", "10000",
        "-X", "session.timeout.ms=6000", "-X", "heartbeat.interval.ms=500"]]
    ids = ["a", "b"]
    instances = {i: ServeInstance(args, i, tmp_path / f"serve-{i}.log") for i in ids}
    lock = threading.Lock()
    feeder = Feeder(cluster.bootstrap, raw, RAW_PARTITIONS, RATE, limit=int(RATE * (SECONDS + 120)))
    supervisor = Supervisor(list(instances.values()), lock)
    nemesis = Nemesis(cluster, {"raw": raw, "tokens": tokens}, instances, lock)
    faults = schedule(SEED, FAULTS, ids, RAW_PARTITIONS, OUT_PARTITIONS)
    terminated = {}
    try:
        for i in instances.values():
            i.start()
        supervisor.start()
        feeder.start()
        time.sleep(3)  # some work before the first fault
        nemesis.run(faults, deadline=time.monotonic() + SECONDS)
        feeder.stop()
        assert supervisor.gave_up is None, supervisor.gave_up
        # Heal: every broker up, then wait until the group's committed offsets
        # reach the raw topic's ends.
        cluster.run("start")
        ends = {p: hi for p, hi in enumerate(_high_watermarks(cluster.bootstrap, raw))}
        deadline = time.monotonic() + 120
        done = {}
        while time.monotonic() < deadline and supervisor.gave_up is None:
            done = committed_offsets(cluster.bootstrap, group, raw, RAW_PARTITIONS)
            if all(done.get(p, -1) >= ends[p] for p in ends):
                break
            time.sleep(1)
        assert all(done.get(p, -1) >= ends[p] for p in ends), \
            f"the instances did not drain the raw topic within 120 s: committed {done}, ends {ends}\n" + \
            "\n".join(i.log()[-3000:] for i in instances.values())
        supervisor.stop()
        for i in instances.values():
            terminated[i.id] = i.terminate()
    finally:
        supervisor.stop()
        for i in instances.values():
            if i.paused:
                i.resume()
            i.kill9()
        feeder._halt.set()
    got = records(cluster.uri(tokens))
    rep = check(cluster.bootstrap, raw, tokens, cluster.uri(raw), got, feeder.acked, tok)
    rep.feeder_failed = feeder.failed
    figures = {
        "seed": SEED, "faults_planned": len(faults), "faults": nemesis.history,
        "faults_injected": sum(1 for h in nemesis.history if not h.startswith(("skipped", "stopped"))),
        "raw_messages": rep.raw_messages, "acknowledged": rep.acked, "feeder_failed": rep.feeder_failed,
        "acknowledged_without_offset": rep.acked_without_offset, "raw_duplicates": rep.raw_duplicates,
        "records_checked": rep.records_checked, "aborted_records_hidden": rep.aborted_records,
        "instance_exits": {i.id: i.exits for i in instances.values()}, "sigterm_exit": terminated,
        "anomalies": {k: len(v) for k, v in rep.anomalies.items()}, "seconds": round(time.monotonic() - started, 1),
    }
    print("exactly-once checker:", json.dumps(figures, indent=1))
    if os.environ.get("TOKENFEED_EO_REPORT"):
        with open(os.environ["TOKENFEED_EO_REPORT"], "w") as f:
            json.dump(dict(figures, anomaly_examples={k: v[:20] for k, v in rep.anomalies.items()}), f, indent=1,
                      default=str)
    assert not rep.anomalies, rep.summary() + "\n" + json.dumps(figures, indent=1)
    # The run proved something: faults landed, the input was not trivial,
    # and every instance stopped cleanly on SIGTERM at the end.
    assert figures["faults_injected"] >= min(FAULTS, 3), nemesis.history
    assert rep.raw_messages >= RATE * 10 and rep.records_checked == rep.raw_messages
    assert all(rc == 0 for rc in terminated.values()), terminated


def test_the_analysis_finds_each_kind_of_anomaly():
    """The checker can fail: records made by hand, one defect of each kind."""
    import tokenfeed
    tok = tokenfeed.Tokenizer.from_file(deepseek())
    uri = "kafka://127.0.0.1:1/raw"
    inputs = {(p, off): (off * 2 + p, document_text(off * 2 + p)) for p in range(2) for off in range(4)}

    def record(p, off, out=None, ids=None, path=uri, doc_seq=None):
        return {"partition": p % 2 if out is None else out,
                "source": {"kind": "message", "topic": path, "partition": p, "offset": off},
                "doc_seq": off if doc_seq is None else doc_seq,
                "ids": tok.encode(inputs[(p, off)][1], split_special_tokens=True) if ids is None else ids}

    good = [record(p, off) for p in range(2) for off in range(4)]
    assert analyse(inputs, good, 2, uri, tok, Report()).anomalies == {}
    cases = {
        "duplicate record": good + [record(1, 3)],
        "raw message with no record": good[:-1],
        "record for no raw message": good + [{**record(0, 0), "source": {"kind": "message", "topic": uri,
                                                                         "partition": 0, "offset": 9}}],
        "wrong token ids": [record(0, 0, ids=[1, 2, 3])] + good[1:],
        "record in the wrong partition": [record(0, 0, out=1)] + good[1:],
        "raw partition order broken": [good[1], good[0]] + good[2:],
        "wrong source or doc_seq": [record(0, 0, doc_seq=5)] + good[1:],
    }
    for kind, records_ in cases.items():
        found = analyse(inputs, records_, 2, uri, tok, Report()).anomalies
        assert kind in found, (kind, found)


def _high_watermarks(bootstrap, topic):
    ck = confluent()
    c = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "eo-watermarks"})
    try:
        return [c.get_watermark_offsets(ck.TopicPartition(topic, p), timeout=10)[1] for p in range(RAW_PARTITIONS)]
    finally:
        c.close()
