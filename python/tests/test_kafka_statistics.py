"""The Kafka clients' statistics reports, tokenfeed.kafka_statistics() (marker: kafka).

A loader whose kafka_properties set statistics.interval.ms leaves librdkafka's
report of each of its clients in the process's store: per broker the bytes
received, per partition the messages fetched, which account for every record
the loader read. Without the property no client reports.
"""

from __future__ import annotations

import time

import pytest

from cli_helpers import deepseek, run, write_jsonl
from kafka_helpers import LocalKafka

pytestmark = pytest.mark.kafka


@pytest.fixture(scope="module")
def topic(tmp_path_factory, kafka_broker):
    d = tmp_path_factory.mktemp("stats")
    texts = [f"document {i}: " + " ".join(["数据", "pipeline", "token", "Kafka", "🙂"][(i * j) % 5]
                                          for j in range(1 + i % 40)) for i in range(2000)]
    write_jsonl(d / "docs.jsonl", texts)
    name = LocalKafka.new_topic("stats")
    run("ingest", "--tokenizer", deepseek(), "--input", d / "docs.jsonl", "--to", kafka_broker.uri(name),
        "--partitions", "2", "--progress", "never", "--kafka-timeout-ms", "20000")
    return name


OPTS = dict(seq_len=64, batch_size=4, seed=3, block_records=128, window_blocks=2, epochs=1, kafka_timeout_ms=20000)


def consumer_reports(stats: dict, topic: str) -> list[dict]:
    return [r for r in stats["clients"].values() if r.get("type") == "consumer" and topic in r.get("topics", {})]


def test_reports_count_what_the_loader_fetched(kafka_broker, topic):
    import tokenfeed

    tokenfeed.kafka_statistics(clear=True)
    ds = tokenfeed.TokenDataset(kafka_broker.uri(topic), kafka_properties={"statistics.interval.ms": 100}, **OPTS)
    steps = sum(1 for _ in ds)
    assert steps > 20
    m = ds.metrics()
    # The loader read everything long before; its clients report every 100 ms
    # but hand a report over only when read or closed: closing them (del)
    # serves the reports waiting, so every record fetched is counted.
    time.sleep(0.5)
    del ds
    stats = tokenfeed.kafka_statistics(clear=True)
    reports = consumer_reports(stats, topic)
    assert reports, f"no consumer reported on {topic}: {list(stats['clients'])}"
    assert stats["dropped"] == 0
    rx_bytes = sum(b["rxbytes"] for r in reports for b in r["brokers"].values())
    fetched = sum(p["rxmsgs"] for r in reports for k, p in r["topics"][topic]["partitions"].items() if k != "-1")
    # Every record the loader read came in a fetch. A block's seek fetches the
    # producer batch that holds it whole (here one batch holds most of a
    # partition), so each of the 16 blocks may fetch up to its partition's
    # 1000 records again (docs/loader.md, "Cost and limits"), never more.
    blocks = sum(-(-1000 // OPTS["block_records"]) for _ in range(2))
    assert m["records_read"] <= fetched <= blocks * 1000, (m["records_read"], fetched)
    assert 0 < rx_bytes < 4 * m["bytes_read"] + 1_000_000, (rx_bytes, m["bytes_read"])
    # clear=True forgot them.
    assert tokenfeed.kafka_statistics() == {"clients": {}, "dropped": 0}


def test_without_the_interval_no_client_reports(kafka_broker, topic):
    import tokenfeed

    tokenfeed.kafka_statistics(clear=True)
    ds = tokenfeed.TokenDataset(kafka_broker.uri(topic), **OPTS)
    assert sum(1 for _ in ds) > 20
    time.sleep(0.3)
    assert tokenfeed.kafka_statistics() == {"clients": {}, "dropped": 0}
