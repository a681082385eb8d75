"""The loader while Kafka brokers fail (markers: kafka, kafka_cluster).

On a three-node cluster (replication 3), the leader of a partition the loader
reads is killed (SIGKILL) in the middle of a run: the loader goes on once
another broker leads, with the same batches as an undisturbed run, and the
stall is measured. With every broker down it fails with a clear error within
its Kafka timeout, never hangs.
"""

from __future__ import annotations

import time

import pytest

from cli_helpers import deepseek, run, write_jsonl
from exactly_once_checker import three_node_cluster
from kafka_helpers import LocalKafka, create_topic

pytestmark = [pytest.mark.kafka, pytest.mark.kafka_cluster]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    yield from three_node_cluster(tmp_path_factory, "failover-cluster")


@pytest.fixture(scope="module")
def topic(cluster, tmp_path_factory):
    d = tmp_path_factory.mktemp("failover")
    texts = [f"document {i}: " + " ".join(["数据", "pipeline", "token", "Kafka", "🙂", "broker"][(i * j) % 6]
                                          for j in range(1 + i % 60)) for i in range(6000)]
    write_jsonl(d / "docs.jsonl", texts)
    name = LocalKafka.new_topic("failover")
    create_topic(cluster.bootstrap, name, 3, {"min.insync.replicas": "2"}, replication=3)
    run("ingest", "--tokenizer", deepseek(), "--input", d / "docs.jsonl", "--to", cluster.uri(name), "--partitions",
        "3", "--progress", "never", "--kafka-timeout-ms", "30000")
    return name


OPTS = dict(seq_len=128, batch_size=4, seed=13, block_records=128, window_blocks=2, epochs=1, prefetch_batches=2)


def test_a_killed_leader_is_replaced_and_the_batches_do_not_change(cluster, topic):
    import tokenfeed

    uri = cluster.uri(topic)
    want = [b["input_ids"].clone() for b in tokenfeed.TokenDataset(uri, kafka_timeout_ms=30000, **OPTS)]
    assert len(want) > 200
    leader = cluster.leader_of(topic, 0)
    assert leader >= 0
    got, waits = [], []
    ds = tokenfeed.TokenDataset(uri, kafka_timeout_ms=30000, **OPTS)
    killed_at = restarted_at = None
    t = time.monotonic()
    for i, b in enumerate(ds):
        now = time.monotonic()
        waits.append(now - t)
        got.append(b["input_ids"].clone())
        if i == len(want) // 5:
            cluster.kill_node(leader)
            killed_at = i
        if i == 3 * len(want) // 5:
            cluster.start_node(leader)
            restarted_at = i
        t = time.monotonic()
    assert killed_at is not None and restarted_at is not None
    assert len(got) == len(want)
    assert all(g.equal(w) for g, w in zip(got, want))
    assert cluster.leader_of(topic, 0) >= 0
    stall = max(waits[killed_at + 1:])
    print(f"\nleader {leader} of partition 0 killed after batch {killed_at}: longest wait for a batch after it "
          f"{stall:.2f} s (undisturbed: {max(waits[1:killed_at]):.3f} s)")
    assert stall < 30  # the Kafka timeout


def test_with_every_broker_down_the_loader_fails_within_its_timeout(cluster, topic):
    import tokenfeed

    uri = cluster.uri(topic)
    ds = tokenfeed.TokenDataset(uri, kafka_timeout_ms=5000, **OPTS)
    it = iter(ds)
    next(it)
    for node in (1, 2, 3):
        cluster.kill_node(node)
    started = time.monotonic()
    try:
        with pytest.raises((tokenfeed.UnavailableError, tokenfeed.TimedOutError)) as failed:
            for _ in range(100000):
                next(it)
        took = time.monotonic() - started
        print(f"\nevery broker down: {type(failed.value).__name__} after {took:.1f} s: {failed.value}")
        # Batches prefetched before the outage still come; then the window being
        # read fails within the timeout (docs/kafka.md, "Failures").
        assert took < 60, took
        assert cluster.bootstrap.split(",")[0] in str(failed.value) or "partition" in str(failed.value)
    finally:
        cluster.run("start")  # all nodes together: a controller alone has no quorum
