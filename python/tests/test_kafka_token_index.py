"""A Kafka topic's token index (docs/kafka.md, "Token index"; marker: kafka).

`tokenfeed index kafka://...` writes TOPIC-token-index: per partition, chunks
that give each record's offset and token ids. With it, a finite sharded run
(shards > 1, epochs > 0) over Kafka finds where every shard ends without
reading the other ranks' records, and replay counts steps past without
reading their records. The same data on the embedded log gives the same
batches; a transactional topic's gaps are indexed as gaps; records appended
after the index was built are counted from the records; a damaged chunk is
reported with its topic, partition and offset.
"""

from __future__ import annotations

import collections
import json
import re
import time

import pytest

import tokenfeed
from cli_helpers import deepseek, records, run, write_jsonl
from kafka_helpers import LocalKafka, confluent
from test_loader_kafka_gaps import PATTERN, read_values, record_ids, transactional_topic

pytestmark = pytest.mark.kafka

OPTS = dict(seq_len=64, seed=11, block_records=16, window_blocks=2, shuffle=True, pack=True)
# A run's records_read may differ by a window read ahead at its end or not.
WINDOW = OPTS["block_records"] * OPTS["window_blocks"]


def _counted_more(more: dict, fewer: dict, records: int) -> bool:
    """Whether run `more` read `records` more records than `fewer` (to count them), give or take a window."""
    return abs(more["records_read"] - fewer["records_read"] - records) <= WINDOW


def _texts(n, salt):
    words = ["数据", "pipeline", "token", "Kafka", "🙂", "index", "shard"]
    return [f"doc {salt}.{i}: " + " ".join(words[(i * j + salt) % 7] for j in range(1 + i % 50)) for i in range(n)]


def _ingest(path, uri: str, partitions: int) -> None:
    run("ingest", "--tokenizer", deepseek(), "--input", path, "--to", uri, "--partitions", str(partitions),
        "--add-eos", "--progress", "never", "--kafka-timeout-ms", "20000")


def _index_table(out: str) -> dict[int, tuple[int, int, int]]:
    rows = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4 and f[0].isdigit():
            rows[int(f[0])] = (int(f[1]), int(f[2]), int(f[3]))
    return rows


def _read_note(out: str) -> int:
    m = re.search(r"read (\d+) records past where the index ended", out)
    assert m, out
    return int(m.group(1))


@pytest.fixture(scope="module")
def same_data(tmp_path_factory, kafka_broker):
    """The same 9000 documents ingested into a 2-partition Kafka topic and a log topic.

    About 4500 records a partition: a build writes two chunks of each (4096 records a chunk)."""
    d = tmp_path_factory.mktemp("kidx")
    write_jsonl(d / "docs.jsonl", _texts(9000, 1))
    kafka = kafka_broker.uri(LocalKafka.new_topic("kidx"))
    log = f"log:{d}/topic"
    for uri in (kafka, log):
        _ingest(d / "docs.jsonl", uri, 2)
    recs = {}
    for uri in (kafka, log):
        recs[uri] = sorted((r["partition"], r["offset"], tuple(r["ids"])) for r in records(uri))
    assert recs[kafka] == recs[log], "ingest should place the same records at the same offsets"
    return kafka, log, recs[log], d


def _run(uri, *, rank, world, batch, steps=None, state=None, **extra):
    ds = tokenfeed.TokenDataset({uri: 1}, batch_size=batch, rank=rank, world_size=world, kafka_timeout_ms=20000,
                                **{**OPTS, **extra})
    if state is not None:
        ds.load_state_dict(state)
    rows, states = [], []
    it = iter(ds)
    while steps is None or len(rows) < steps:
        states.append(ds.state_dict())
        try:
            b = next(it)
        except StopIteration:
            break
        if extra.get("pack", True):
            rows.append(b["input_ids"].tolist())
        else:  # the documents, without padding
            rows.append([tuple(int(x) for x in row[m.bool()]) for row, m in zip(b["input_ids"], b["attention_mask"])])
    return rows, states, ds.metrics()


def test_the_index_gives_every_partition_its_records_and_tokens(same_data):
    kafka, log, recs, _ = same_data
    out = run("index", kafka, "--kafka-timeout-ms", "20000").stdout
    rows = _index_table(out)
    for p in range(2):
        mine = [r for r in recs if r[0] == p]
        assert len(mine) > 4096  # more than one chunk
        assert rows[p] == (len(mine), len(mine), sum(len(r[2]) for r in mine)), out
    assert _index_table(run("index", log).stdout) == rows
    again = run("index", kafka, "--kafka-timeout-ms", "20000").stdout
    assert _read_note(again) == 0 and _index_table(again) == rows


def test_a_finite_sharded_run_over_kafka_is_the_log_runs_and_reads_no_other_shard(same_data):
    kafka, log, recs, _ = same_data
    run("index", kafka, "--kafka-timeout-ms", "20000")
    total = len(recs)
    runs = {}
    for uri in (kafka, log):
        runs[uri] = [_run(uri, rank=r, world=2, batch=16, shards=4, epochs=1) for r in range(2)]
    for r in range(2):
        k_rows, k_states, k_metrics = runs[kafka][r]
        l_rows, _, l_metrics = runs[log][r]
        assert k_rows == l_rows and len(k_rows) > 20
        # Only its own shards' windows: about half the records, nothing to count the others.
        assert _counted_more(k_metrics, l_metrics, 0) and k_metrics["records_read"] < total, (k_metrics, l_metrics)
    # Both ranks end at the same step.
    assert len(runs[kafka][0][0]) == len(runs[kafka][1][0])


def test_records_appended_after_the_index_are_counted_then_indexed(kafka_broker, tmp_path):
    write_jsonl(tmp_path / "a.jsonl", _texts(400, 2))
    name = LocalKafka.new_topic("kidx-grow")
    uri = kafka_broker.uri(name)
    _ingest(tmp_path / "a.jsonl", uri, 2)
    assert _read_note(run("index", uri, "--kafka-timeout-ms", "20000").stdout) == 400
    # 300 more token records, appended by another writer.
    values = read_values(kafka_broker.bootstrap, name, 2)
    ck = confluent()
    p = ck.Producer({"bootstrap.servers": kafka_broker.bootstrap})
    for i in range(300):
        p.produce(name, values[i % 2][i // 2], partition=i % 2)
    p.flush(30)
    # The index covers the first 400: a finite sharded run counts the 300 after it.
    rows, _, metrics = _run(uri, rank=0, world=1, batch=2, shards=2, epochs=1)
    assert metrics["records_read"] >= 300
    out = run("index", uri, "--kafka-timeout-ms", "20000").stdout
    assert _read_note(out) == 300
    assert sum(v[0] for v in _index_table(out).values()) == 700
    again, _, metrics2 = _run(uri, rank=0, world=1, batch=2, shards=2, epochs=1)
    assert again == rows and _counted_more(metrics, metrics2, 300), (metrics, metrics2)


def test_a_transactional_topic_is_indexed_with_its_gaps(kafka_broker, tmp_path):
    d = tmp_path
    write_jsonl(d / "docs.jsonl", _texts(900, 4))
    plain = kafka_broker.uri(LocalKafka.new_topic("kidx-plain"))
    _ingest(d / "docs.jsonl", plain, 1)
    values = read_values(kafka_broker.bootstrap, plain.rsplit("/", 1)[1], 1)[0]
    name, committed = transactional_topic(kafka_broker, values, 2, PATTERN[:6])
    uri = kafka_broker.uri(name)
    # Before the index: each rank counts every record to find where the shards end.
    unpacked = dict(shards=4, epochs=1, pack=False)
    counted = [_run(uri, rank=r, world=2, batch=4, **unpacked) for r in range(2)]
    out = run("index", uri, "--kafka-timeout-ms", "20000").stdout
    rows = _index_table(out)
    for p in range(2):
        n = len(committed[p])
        assert rows[p] == (n, n, sum(len(record_ids(v)) for v in committed[p])), out
    indexed = [_run(uri, rank=r, world=2, batch=4, **unpacked) for r in range(2)]
    total = sum(len(committed[p]) for p in range(2))
    for r in range(2):
        assert indexed[r][0] == counted[r][0]
        assert _counted_more(counted[r][2], indexed[r][2], total), (counted[r][2], indexed[r][2])
    # Every committed record is some row's document (the shards that finish
    # first read on into the next pass).
    wanted = collections.Counter(record_ids(v)[:OPTS["seq_len"]] for p in range(2) for v in committed[p])
    got = collections.Counter(doc for r in range(2) for step in indexed[r][0] for doc in step)
    assert not wanted - got and sum(got.values()) < 2 * sum(wanted.values())
    # Replay, packed, counts past the gaps from the index.
    packed, states, _ = _run(uri, rank=0, world=1, batch=2, steps=40)
    replayed = tokenfeed.TokenDataset.replay(states[1], 38)
    assert [row["input_ids"].tolist() for row in replayed] == packed[38]


def test_the_index_follows_retention_and_refuses_a_recreated_topic(kafka_broker, tmp_path):
    ck = confluent()
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": kafka_broker.bootstrap})
    write_jsonl(tmp_path / "docs.jsonl", _texts(600, 7))
    name = LocalKafka.new_topic("kidx-ret")
    uri = kafka_broker.uri(name)
    ingest = ["ingest", "--tokenizer", deepseek(), "--input", tmp_path / "docs.jsonl", "--to", uri,
              "--partitions", "1", "--add-eos", "--progress", "never", "--kafka-timeout-ms", "20000"]
    run(*ingest)
    assert _read_note(run("index", uri, "--kafka-timeout-ms", "20000").stdout) == 600

    def delete_before(offset):
        for f in admin.delete_records([ck.TopicPartition(name, 0, offset)]).values():
            f.result(30)

    def expected():
        ids = [r["ids"] for r in records(uri)]
        return (len(ids), len(ids), sum(map(len, ids)))

    # Records removed from the front: the index still covers what is left.
    delete_before(250)
    out = run("index", uri, "--kafka-timeout-ms", "20000").stdout
    assert _read_note(out) == 0 and _index_table(out)[0] == expected() and expected()[0] == 350, out
    # Appended, then removed past the index's end: the build notes the gap and goes on.
    values = read_values(kafka_broker.bootstrap, name, 1)[0]
    p = ck.Producer({"bootstrap.servers": kafka_broker.bootstrap})
    for v in values[:100]:
        p.produce(name, v, partition=0)
    p.flush(30)
    delete_before(650)
    with_index_short = _run(uri, rank=0, world=1, batch=2, shards=2, epochs=1)  # the index ends before the start
    out = run("index", uri, "--kafka-timeout-ms", "20000").stdout
    assert _read_note(out) == 50 and _index_table(out)[0] == expected(), out
    indexed = _run(uri, rank=0, world=1, batch=2, shards=2, epochs=1)
    assert indexed[0] == with_index_short[0]
    assert _counted_more(with_index_short[2], indexed[2], 50), (with_index_short[2], indexed[2])

    # The topic deleted and made again, its old index kept: refused, not trusted.
    for f in admin.delete_topics([name]).values():
        f.result(30)
    write_jsonl(tmp_path / "few.jsonl", _texts(40, 8))
    for _ in range(60):
        r = run("ingest", "--tokenizer", deepseek(), "--input", tmp_path / "few.jsonl", "--to", uri,
                "--partitions", "1", "--add-eos", "--progress", "never", "--kafka-timeout-ms", "20000", check=False)
        if r.returncode == 0:
            break
        time.sleep(0.5)  # the deletion is still under way
    assert r.returncode == 0, r.stderr
    r = run("index", uri, "--kafka-timeout-ms", "20000", check=False)
    assert r.returncode == 1 and "past the partition's end offset 40" in r.stderr, r.stderr
    with pytest.raises(Exception, match="deleted and created again"):
        _run(uri, rank=0, world=1, batch=2, shards=2, epochs=1)


def test_replay_over_kafka_counts_steps_past_from_the_index(kafka_broker, tmp_path):
    write_jsonl(tmp_path / "docs.jsonl", _texts(1500, 6))
    uri = kafka_broker.uri(LocalKafka.new_topic("kidx-replay"))
    _ingest(tmp_path / "docs.jsonl", uri, 2)
    rows, states, _ = _run(uri, rank=0, world=1, batch=2, steps=60)
    path = tmp_path / "state.json"
    path.write_text(json.dumps(states[1]))

    def replay():
        r = run("replay", "--state", path, "--step", 55, "--kafka-timeout-ms", "20000")
        m = re.search(r"\((\d+) steps counted past, (\d+) records read\)", r.stdout)
        assert m, r.stdout[:500]
        assert int(m.group(1)) == 54
        return int(m.group(2))

    without = replay()  # no index yet: the windows counted past are read
    run("index", uri, "--kafka-timeout-ms", "20000")
    with_index = replay()
    # The windows of step 55 (and the one read ahead), not the 54 steps' before them.
    assert with_index <= 2 * 2 * WINDOW < without, (with_index, without)
    replayed = tokenfeed.TokenDataset.replay(states[1], 55)
    assert [row["input_ids"].tolist() for row in replayed] == rows[55]


def test_a_damaged_chunk_is_reported_with_where_it_lies(kafka_broker, tmp_path):
    write_jsonl(tmp_path / "docs.jsonl", _texts(200, 5))
    name = LocalKafka.new_topic("kidx-bad")
    uri = kafka_broker.uri(name)
    _ingest(tmp_path / "docs.jsonl", uri, 1)
    run("index", uri, "--kafka-timeout-ms", "20000")
    ck = confluent()
    p = ck.Producer({"bootstrap.servers": kafka_broker.bootstrap})
    p.produce(f"{name}-token-index", b"TFKX\x01\x00\x00\x00 not a chunk", partition=0)
    p.flush(30)
    r = run("index", uri, "--kafka-timeout-ms", "20000", check=False)
    assert r.returncode == 1
    assert f"{name}-token-index partition 0 offset 1" in r.stderr and "token index chunk" in r.stderr, r.stderr
    with pytest.raises(Exception, match=r"token-index partition 0 offset 1"):
        _run(uri, rank=0, world=1, batch=2, shards=2, epochs=1)


def _delete_topic(bootstrap: str, topic: str) -> None:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    for f in admin.delete_topics([topic]).values():
        f.result(30)
    deadline = time.monotonic() + 30
    while topic in admin.list_topics(timeout=10).topics:
        assert time.monotonic() < deadline, f"{topic} is still listed 30 s after its deletion"
        time.sleep(0.2)


def _summaries_note(out: str) -> tuple[int, int]:
    m = re.search(r"wrote (\d+) chunks .* and (\d+) summaries", out)
    assert m, out
    return int(m.group(1)), int(m.group(2))


def test_block_boundaries_come_from_the_summaries(kafka_broker, tmp_path):
    """Blocks of a multiple of 64 records are read from TOPIC-token-summary alone (every rank reads it
    whole, ~1/20 of the chunks); other blocks need the chunks. Lost summaries are made again from the
    chunks without reading a record."""
    write_jsonl(tmp_path / "docs.jsonl", _texts(3000, 9))
    name = LocalKafka.new_topic("kidx-sum")
    kafka = kafka_broker.uri(name)
    log = f"log:{tmp_path}/topic"
    for uri in (kafka, log):
        _ingest(tmp_path / "docs.jsonl", uri, 2)
    out = run("index", kafka, "--kafka-timeout-ms", "20000").stdout
    assert _read_note(out) == 3000 and _summaries_note(out) == (2, 2), out
    table = _index_table(out)
    assert table == _index_table(run("index", log).stdout)

    # The summaries lost: the next build writes them from the chunks, reading no record.
    _delete_topic(kafka_broker.bootstrap, f"{name}-token-summary")
    out = run("index", kafka, "--kafka-timeout-ms", "20000").stdout
    assert _read_note(out) == 0 and _summaries_note(out) == (0, 2) and _index_table(out) == table, out
    out = run("index", kafka, "--kafka-timeout-ms", "20000").stdout
    assert _read_note(out) == 0 and _summaries_note(out) == (0, 0), out

    # The chunks gone, the summaries answer blocks of 64 records: the log's rows, no record counted.
    _delete_topic(kafka_broker.bootstrap, f"{name}-token-index")
    total = 3000
    for block in (64, 128):
        k_rows, _, k_metrics = _run(kafka, rank=0, world=1, batch=4, shards=4, epochs=1, block_records=block)
        l_rows, _, l_metrics = _run(log, rank=0, world=1, batch=4, shards=4, epochs=1, block_records=block)
        assert k_rows == l_rows and len(k_rows) > 10
        window = block * OPTS["window_blocks"]
        assert abs(k_metrics["records_read"] - l_metrics["records_read"]) <= window, (block, k_metrics, l_metrics)
    # Blocks of 16 records end inside the summaries' groups: without the chunks, the records are counted.
    k_rows, _, k_metrics = _run(kafka, rank=0, world=1, batch=4, shards=4, epochs=1)
    l_rows, _, l_metrics = _run(log, rank=0, world=1, batch=4, shards=4, epochs=1)
    assert k_rows == l_rows and _counted_more(k_metrics, l_metrics, total), (k_metrics, l_metrics)
    # Summaries without their chunks are not built on.
    r = run("index", kafka, "--kafka-timeout-ms", "20000", check=False)
    assert r.returncode == 1 and f"{name}-token-summary partition 0" in r.stderr, r.stderr
    assert "do not follow the chunks" in r.stderr, r.stderr

    # Records appended after the build are counted past the summaries' end.
    values = read_values(kafka_broker.bootstrap, name, 2)
    ck = confluent()
    p = ck.Producer({"bootstrap.servers": kafka_broker.bootstrap})
    for i in range(200):
        p.produce(name, values[i % 2][i // 2], partition=i % 2)
    p.flush(30)
    before, _, m_before = _run(kafka, rank=0, world=1, batch=4, shards=4, epochs=1, block_records=64)
    assert before != k_rows and m_before["records_read"] >= 200, m_before


def test_the_build_cuts_chunks_and_groups_as_told(kafka_broker, tmp_path):
    """--chunk-records and --summary-group: larger groups for topics of billions of records (each rank reads
    the summaries whole); the summaries then answer blocks of a multiple of the group only."""
    write_jsonl(tmp_path / "docs.jsonl", _texts(2500, 12))
    name = LocalKafka.new_topic("kidx-group")
    kafka = kafka_broker.uri(name)
    log = f"log:{tmp_path}/topic"
    for uri in (kafka, log):
        _ingest(tmp_path / "docs.jsonl", uri, 1)
    for bad in (["--summary-group", "0"], ["--chunk-records", "65537"]):
        r = run("index", kafka, *bad, check=False)
        assert r.returncode == 2 and bad[0] in r.stderr, r.stderr
    out = run("index", kafka, "--chunk-records", "1000", "--summary-group", "256", "--kafka-timeout-ms",
              "20000").stdout
    assert _summaries_note(out) == (3, 3) and _index_table(out) == _index_table(run("index", log).stdout), out
    _delete_topic(kafka_broker.bootstrap, f"{name}-token-index")
    opts = dict(rank=0, world=1, batch=4, shards=2, epochs=1)
    for block, counted in ((256, 0), (512, 0), (128, 2500)):
        k_rows, _, k_metrics = _run(kafka, block_records=block, **opts)
        l_rows, _, l_metrics = _run(log, block_records=block, **opts)
        assert k_rows == l_rows and len(k_rows) > 5
        diff = k_metrics["records_read"] - l_metrics["records_read"] - counted
        assert abs(diff) <= block * OPTS["window_blocks"], (block, k_metrics, l_metrics)


def test_summaries_that_lag_the_chunks_give_way_to_them(kafka_broker, tmp_path):
    """A build that stopped between its chunks and their summaries: a read past the summaries' end takes
    the chunks (reading no record), not the records; the next build writes the missing summaries."""
    ck = confluent()
    from confluent_kafka.admin import AdminClient, NewTopic

    write_jsonl(tmp_path / "docs.jsonl", _texts(600, 3))
    name = LocalKafka.new_topic("kidx-lag")
    uri = kafka_broker.uri(name)
    _ingest(tmp_path / "docs.jsonl", uri, 1)
    run("index", uri, "--kafka-timeout-ms", "20000")
    values = read_values(kafka_broker.bootstrap, name, 1)[0]
    p = ck.Producer({"bootstrap.servers": kafka_broker.bootstrap})
    for v in values[:300]:
        p.produce(name, v, partition=0)
    p.flush(30)
    out = run("index", uri, "--kafka-timeout-ms", "20000").stdout
    assert _read_note(out) == 300 and _summaries_note(out) == (1, 1), out
    opts = dict(rank=0, world=1, batch=2, shards=2, epochs=1, block_records=64)
    whole, _, m_whole = _run(uri, **opts)

    # The summaries as a stopped build left them: the first build's only.
    summaries = read_values(kafka_broker.bootstrap, f"{name}-token-summary", 1)[0]
    assert len(summaries) == 2
    _delete_topic(kafka_broker.bootstrap, f"{name}-token-summary")
    admin = AdminClient({"bootstrap.servers": kafka_broker.bootstrap})
    for f in admin.create_topics([NewTopic(f"{name}-token-summary", 1, 1)]).values():
        f.result(30)
    p.produce(f"{name}-token-summary", summaries[0], partition=0)
    p.flush(30)
    lagging, _, m_lagging = _run(uri, **opts)
    assert lagging == whole
    window = 64 * OPTS["window_blocks"]
    assert abs(m_lagging["records_read"] - m_whole["records_read"]) <= window, (m_lagging, m_whole)
    out = run("index", uri, "--kafka-timeout-ms", "20000").stdout
    assert _read_note(out) == 0 and _summaries_note(out) == (0, 1), out


def test_a_damaged_summary_is_reported_with_where_it_lies(kafka_broker, tmp_path):
    write_jsonl(tmp_path / "docs.jsonl", _texts(200, 4))
    name = LocalKafka.new_topic("kidx-badsum")
    uri = kafka_broker.uri(name)
    _ingest(tmp_path / "docs.jsonl", uri, 1)
    run("index", uri, "--kafka-timeout-ms", "20000")
    ck = confluent()
    p = ck.Producer({"bootstrap.servers": kafka_broker.bootstrap})
    p.produce(f"{name}-token-summary", b"TFKS\x01\x00\x00\x00 not a summary", partition=0)
    p.flush(30)
    where = f"{name}-token-summary partition 0 offset 1"
    r = run("index", uri, "--kafka-timeout-ms", "20000", check=False)
    assert r.returncode == 1 and where in r.stderr and "token index summary" in r.stderr, r.stderr
    assert f"delete {kafka_broker.uri(name + '-token-summary')}" in r.stderr, r.stderr
    with pytest.raises(Exception, match=re.escape(where)):
        _run(uri, rank=0, world=1, batch=2, shards=2, epochs=1, block_records=64)


def test_an_unreachable_broker_fails_the_build_naming_it():
    r = run("index", "kafka://127.0.0.1:1/t", "--kafka-timeout-ms", "2000", check=False, timeout=60)
    assert r.returncode != 0 and "127.0.0.1:1" in r.stderr, r.stderr
