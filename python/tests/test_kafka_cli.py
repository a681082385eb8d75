"""tokenfeed ingest / inspect / topics on a real Kafka broker (marker: kafka).

The embedded log is the reference: the same corpus ingested to the log and to
Kafka must give the same records in every partition, also when the Kafka
ingest is killed and resumed, or the broker restarts under it.
"""

from __future__ import annotations

import json
import random
import signal
import subprocess
import time

import pytest

from cli_helpers import cli, deepseek, records, run, write_jsonl
from kafka_helpers import LocalKafka, confluent, create_topic

pytestmark = pytest.mark.kafka


def texts(n, seed):
    rng = random.Random(seed)
    words = ["alpha", "beta", "数据", "管道", "テキスト", "한국어", "données", "🙂", "1234", "x=y+1;", "\n", "Kafka"]
    return [" ".join(rng.choice(words) for _ in range(rng.randint(1, 80))) + f" #{i}" for i in range(n)]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    d = tmp_path_factory.mktemp("kafka-corpus")
    t = texts(4000, seed=3)
    write_jsonl(d / "a.jsonl", t[:2500])
    write_jsonl(d / "b.jsonl", t[2500:])
    return d, t


@pytest.fixture(scope="module")
def big_corpus(tmp_path_factory):
    """Large enough that producing it to Kafka takes a few seconds."""
    d = tmp_path_factory.mktemp("kafka-big-corpus")
    t = texts(160000, seed=9)
    for k in range(4):
        write_jsonl(d / f"part{k}.jsonl", t[k * 40000:(k + 1) * 40000])
    return d


def ingest_args(inputs, uri, *extra, timeout_ms=20000):
    return ["ingest", "--tokenizer", deepseek(), "--input", *map(str, inputs), "--to", uri, "--progress", "never",
            "--kafka-timeout-ms", str(timeout_ms), *map(str, extra)]


def ingest(inputs, uri, *extra, check=True, timeout_ms=20000):
    return run(*ingest_args(inputs, uri, *extra, timeout_ms=timeout_ms), check=check, timeout=300)


def test_log_and_kafka_hold_the_same_records(tmp_path, corpus, kafka_broker):
    d, t = corpus
    log_uri = f"log:{tmp_path}/ref"
    kafka_uri = kafka_broker.uri(LocalKafka.new_topic())
    ingest([d], log_uri, "--partitions", "3")
    ingest([d], kafka_uri, "--partitions", "3")
    want = records(log_uri)
    got = records(kafka_uri)
    assert len(got) == len(t)
    # Every field, offsets included: the Kafka partitions are dense like the
    # log's (an idempotent producer writes no transaction markers).
    assert got == want
    topics = json.loads(run("topics", kafka_uri, "--json").stdout)
    assert topics["records"] == len(t)
    assert [p["records"] for p in topics["partitions"]] == \
        [sum(1 for r in want if r["partition"] == p) for p in range(3)]
    assert "Kafka" in topics["details"] and kafka_broker.bootstrap in topics["details"]
    text = run("topics", kafka_uri).stdout
    assert "total" in text and str(len(t)) in text


@pytest.mark.parametrize("compression", ["zstd", "none"])
def test_every_compression_reads_back_the_same(tmp_path, corpus, kafka_broker, compression):
    d, _ = corpus
    log_uri = f"log:{tmp_path}/ref"
    kafka_uri = kafka_broker.uri(LocalKafka.new_topic())
    ingest([d], log_uri, "--partitions", "2")
    ingest([d], kafka_uri, "--partitions", "2", "--compression", compression)
    assert records(kafka_uri) == records(log_uri)


def test_inspect_ranges_and_errors_on_kafka(corpus, kafka_broker):
    d, t = corpus
    uri = kafka_broker.uri(LocalKafka.new_topic())
    ingest([d], uri, "--partitions", "2")
    one = [json.loads(l) for l in run("inspect", uri, "--partition", "1", "--offset", "5", "--count", "3",
                                      "--json").stdout.splitlines()]
    assert [(r["partition"], r["offset"]) for r in one] == [(1, 5), (1, 6), (1, 7)]
    assert [r["doc_seq"] for r in one] == [11, 13, 15]  # round-robin: partition 1 holds the odd documents
    decoded = run("inspect", uri, "--count", "1", "--decode", "--tokenizer", deepseek()).stdout
    assert t[0].split()[0] in decoded
    assert "no partition 9" in run("inspect", uri, "--partition", "9", check=False).stderr
    assert "past it" in run("inspect", uri, "--partition", "0", "--offset", "999999", check=False).stderr
    missing = run("topics", kafka_broker.uri(LocalKafka.new_topic("missing")), check=False)
    assert missing.returncode != 0 and "does not exist" in missing.stderr


def test_finished_kafka_ingest_run_again_adds_nothing(tmp_path, corpus, kafka_broker):
    d, t = corpus
    uri = kafka_broker.uri(LocalKafka.new_topic())
    ingest([d], uri, "--partitions", "2")
    ingest([d], uri, "--partitions", "2", "--stats-json", tmp_path / "s2.json")
    s2 = json.loads((tmp_path / "s2.json").read_text())
    assert s2["documents_written"] == 0 and s2["documents_skipped_already_in_topic"] == len(t)
    assert len(records(uri)) == len(t)
    other = ingest([d], uri, "--partitions", "3", check=False)
    assert other.returncode != 0 and "has 2 partitions" in other.stderr


def topic_records(uri) -> int:
    t = run("topics", uri, "--json", check=False)
    return json.loads(t.stdout)["records"] if t.returncode == 0 else 0


def test_killed_and_restarted_kafka_ingest_equals_an_uninterrupted_run(tmp_path, big_corpus, kafka_broker):
    """SIGKILL at random points, records produced but not acknowledged included."""
    log_uri = f"log:{tmp_path}/ref"
    ingest([big_corpus], log_uri, "--partitions", "3", "--threads", "2")
    want = records(log_uri)

    def args_for(uri):
        return [cli(), *ingest_args([big_corpus], uri, "--partitions", "3", "--threads", "2",
                                    "--batch-bytes", "65536")]

    uninterrupted = kafka_broker.uri(LocalKafka.new_topic("whole"))
    started = time.monotonic()
    p = subprocess.run(args_for(uninterrupted), capture_output=True, text=True, timeout=300)
    duration = time.monotonic() - started
    assert p.returncode == 0, p.stderr
    assert records(uninterrupted) == want

    rng = random.Random(11)
    kills = partial = 0
    # Two rounds at least; up to two more (bounded) when the machine was so
    # fast or so slow that no kill landed while the topic was partly written.
    for round_ in range(4):
        if round_ >= 2 and kills > 0 and partial > 0:
            break
        uri = kafka_broker.uri(LocalKafka.new_topic(f"kill{round_}"))
        for attempt in range(5):  # bounded: kill up to 4 times, then let it finish
            before = topic_records(uri)
            started = time.monotonic()
            p = subprocess.Popen(args_for(uri), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if attempt < 4:
                if attempt % 2 == 0:
                    # Kill as soon as new records are in the topic: mid-run.
                    deadline = started + 2 * duration
                    while p.poll() is None and time.monotonic() < deadline and topic_records(uri) <= before:
                        time.sleep(0.02)
                else:
                    # Kill at a random point of the first half of a whole run
                    # (start-up included; a resumed run is shorter).
                    time.sleep(max(0.0, started + rng.uniform(0.05, 0.5) * duration - time.monotonic()))
                if p.poll() is None:
                    p.send_signal(signal.SIGKILL)
                    kills += 1
            _, err = p.communicate(timeout=300)
            if p.returncode == 0:
                break
            assert p.returncode == -signal.SIGKILL, err.decode()
            if before < topic_records(uri) < len(want):
                partial += 1
        assert p.returncode == 0, err.decode()
        got = records(uri)
        assert len(got) == len(want), f"round {round_}"
        assert got == want, f"round {round_}"
    print(f"duration {duration:.1f} s, {kills} kills, {partial} partial")
    assert kills > 0 and partial > 0, f"{kills} kills, {partial} with a partly written topic: the test proved nothing"


def test_unreachable_broker_fails_within_the_timeout_naming_it(tmp_path, corpus):
    d, _ = corpus
    started = time.monotonic()
    r = ingest([d], "kafka://127.0.0.1:1/t", timeout_ms=3000, check=False)
    took = time.monotonic() - started
    assert r.returncode != 0 and "127.0.0.1:1" in r.stderr and "unreachable" in r.stderr
    assert took < 15, f"took {took:.1f} s"
    started = time.monotonic()
    r = run("topics", "kafka://127.0.0.1:1/t", "--kafka-timeout-ms", "3000", check=False)
    assert r.returncode != 0 and "127.0.0.1:1" in r.stderr and time.monotonic() - started < 15
    # The client library's own lines are the CLI's: "tokenfeed kafka: error: [FAIL ...] ...", never raw.
    assert "tokenfeed kafka: " in r.stderr and "|FAIL|" not in r.stderr, r.stderr


def test_missing_topic_is_created_or_an_error_with_no_create(corpus, kafka_broker):
    d, t = corpus
    name = LocalKafka.new_topic("nocreate")
    r = ingest([d], kafka_broker.uri(name), "--no-create", check=False)
    assert r.returncode != 0 and "does not exist" in r.stderr and name in r.stderr
    assert run("topics", kafka_broker.uri(name), check=False).returncode != 0  # still not there
    ingest([d], kafka_broker.uri(name), "--partitions", "5")
    topics = json.loads(run("topics", kafka_broker.uri(name), "--json").stdout)
    assert len(topics["partitions"]) == 5 and topics["records"] == len(t)


def test_a_record_larger_than_the_topic_accepts_is_a_clear_error(tmp_path, kafka_broker):
    d = tmp_path / "in"
    d.mkdir()
    write_jsonl(d / "a.jsonl", ["small document"] * 1 + [" ".join(f"w{i}" for i in range(30000))])
    name = LocalKafka.new_topic("small")
    create_topic(kafka_broker.bootstrap, name, 1, {"max.message.bytes": "20000"})
    r = ingest([d], kafka_broker.uri(name), check=False)
    assert r.returncode != 0
    assert "max.message.bytes = 20000" in r.stderr, r.stderr
    size = int(r.stderr.split("a record of ")[1].split(" bytes")[0])
    assert size > 20000
    assert "raise max.message.bytes on topic" in r.stderr


def test_broker_restarted_during_ingest_loses_and_doubles_nothing(tmp_path, big_corpus, kafka_broker):
    log_uri = f"log:{tmp_path}/ref"
    ingest([big_corpus], log_uri, "--partitions", "2", "--threads", "1")
    want = records(log_uri)
    uri = kafka_broker.uri(LocalKafka.new_topic("restart"))
    p = subprocess.Popen([cli(), *ingest_args([big_corpus], uri, "--partitions", "2", "--threads", "1",
                                              timeout_ms=60000)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # wait until records are flowing
            t = run("topics", uri, "--json", check=False)
            if t.returncode == 0 and json.loads(t.stdout)["records"] > 1000:
                break
            time.sleep(0.05)
        assert p.poll() is None, "the ingest finished before the broker could be restarted: use a larger corpus"
        kafka_broker.kill_node(1)  # SIGKILL
        kafka_broker.start_node(1)
        _, err = p.communicate(timeout=240)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == 0, err
    assert records(uri) == want


def _batches(ds):
    return [{k: b[k].clone() for k in ("input_ids", "labels", "position_ids")} for b in ds]


def test_token_dataset_reads_kafka_as_it_reads_the_log_and_resumes(tmp_path, corpus, kafka_broker):
    """The loader over Kafka gives the batches it gives over the log, token for token.

    Small blocks and windows, so that reading jumps between many offsets of
    every partition (seeks, blocks that continue where the last one ended,
    blocks that end inside a fetched batch).
    """
    import tokenfeed

    d, t = corpus
    log_uri = f"log:{tmp_path}/ref"
    kafka_uri = kafka_broker.uri(LocalKafka.new_topic())
    ingest([d], log_uri, "--partitions", "3")
    ingest([d], kafka_uri, "--partitions", "3")
    opts = dict(seq_len=64, batch_size=4, seed=11, block_records=50, window_blocks=4, epochs=1)
    want = _batches(tokenfeed.TokenDataset(log_uri, **opts))
    got = _batches(tokenfeed.TokenDataset(kafka_uri, **opts))
    assert len(want) > 100
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        for k in w:
            assert g[k].equal(w[k]), f"batch {i}, {k}"

    # Resume over Kafka from a state taken after 37 batches.
    first = tokenfeed.TokenDataset(kafka_uri, **opts)
    it = iter(first)
    for _ in range(37):
        next(it)
    state = json.loads(json.dumps(first.state_dict()))
    again = tokenfeed.TokenDataset(kafka_uri, **opts)
    again.load_state_dict(state)
    rest = _batches(again)
    assert len(rest) == len(want) - 37
    for i, (g, w) in enumerate(zip(rest, want[37:])):
        assert g["input_ids"].equal(w["input_ids"]), f"batch {37 + i} after resume"


def test_token_dataset_blocks_default_to_4096_records_on_kafka(corpus, kafka_broker):
    """Left unset, Kafka's blocks are 4096 records (fewer seeks): the stream and state of asking for 4096."""
    import tokenfeed

    d, _ = corpus
    uri = kafka_broker.uri(LocalKafka.new_topic())
    ingest([d], uri, "--partitions", "1")  # 4000 records: one block of 4096, or four of 1024
    opts = dict(seq_len=64, batch_size=4, seed=5, epochs=1, window_blocks=2)
    default = _batches(tokenfeed.TokenDataset(uri, **opts))
    big = _batches(tokenfeed.TokenDataset(uri, block_records=4096, **opts))
    small = _batches(tokenfeed.TokenDataset(uri, block_records=1024, **opts))
    assert len(default) == len(big) == len(small) > 100
    assert all(g["input_ids"].equal(w["input_ids"]) for g, w in zip(default, big))
    assert not all(g["input_ids"].equal(w["input_ids"]) for g, w in zip(default, small))
    state = tokenfeed.TokenDataset(uri, **opts).state_dict()
    tokenfeed.TokenDataset(uri, block_records=4096, **opts).load_state_dict(state)
    with pytest.raises(ValueError, match="other sources or settings"):
        tokenfeed.TokenDataset(uri, block_records=1024, **opts).load_state_dict(state)


def test_a_raw_text_topic_is_named_as_such_not_as_a_newer_format(tmp_path, corpus, kafka_broker):
    d, _ = corpus
    name = LocalKafka.new_topic("raw")
    create_topic(kafka_broker.bootstrap, name, 1)
    ck = confluent()
    p = ck.Producer({"bootstrap.servers": kafka_broker.bootstrap})
    p.produce(name, json.dumps({"text": "a raw document"}).encode(), partition=0)
    assert p.flush(30) == 0
    for r in (run("inspect", kafka_broker.uri(name), check=False), ingest([d], kafka_broker.uri(name), check=False)):
        assert r.returncode != 0
        assert "not a token record" in r.stderr and "upgrade" not in r.stderr, r.stderr
