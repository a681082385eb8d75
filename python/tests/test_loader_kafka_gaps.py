"""The loader over Kafka topics whose offsets have gaps (marker: kafka).

A transactional producer leaves a control record (commit or abort marker)
after each transaction, and an aborted transaction's records are never seen
by a read_committed reader: offsets with no record to read. `tokenfeed
serve` writes its output so. The loader reads such a topic as the records a
read_committed consumer sees, once each per epoch, and resumes exactly.
"""

from __future__ import annotations

import collections
import json
import struct
import time

import pytest

from cli_helpers import run, write_jsonl, deepseek
from kafka_helpers import LocalKafka, confluent, create_topic

pytestmark = pytest.mark.kafka


def record_ids(value: bytes) -> tuple[int, ...]:
    """A token record's ids, read by the record format's rules (docs/record_format.md)."""
    version, flags, path_len, count = struct.unpack_from("<BBHI", value, 0)
    assert version == 1
    attrs_len, = struct.unpack_from("<H", value, 32)
    at = (36 + path_len + attrs_len + 3) & ~3
    width = 4 if flags & 1 else 2
    assert at + count * width == len(value)
    return struct.unpack_from(f"<{count}{'I' if width == 4 else 'H'}", value, at)


def read_values(bootstrap: str, topic: str, partitions: int) -> dict[int, list[bytes]]:
    """Every record a read_committed consumer sees, by partition, in offset order."""
    ck = confluent()
    c = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "unused", "enable.auto.commit": False,
                     "isolation.level": "read_committed", "enable.partition.eof": True})
    c.assign([ck.TopicPartition(topic, p, ck.OFFSET_BEGINNING) for p in range(partitions)])
    out: dict[int, list[bytes]] = {p: [] for p in range(partitions)}
    done: set[int] = set()
    for _ in range(100000):
        if len(done) == partitions:
            break
        m = c.poll(10)
        assert m is not None, f"reading {topic} stalled"
        if m.error():
            assert m.error().code() == ck.KafkaError._PARTITION_EOF, m.error()
            done.add(m.partition())
            continue
        out[m.partition()].append(m.value())
    c.close()
    return out


@pytest.fixture(scope="module")
def documents(tmp_path_factory, kafka_broker):
    """Token records of 1200 documents (values of a plain topic, ingested)."""
    d = tmp_path_factory.mktemp("gaps")
    texts = [f"document {i}: " + " ".join(["数据", "pipeline", "token", "Kafka", "🙂"][(i * j) % 5]
                                          for j in range(1 + i % 40)) for i in range(1200)]
    write_jsonl(d / "docs.jsonl", texts)
    name = LocalKafka.new_topic("plain")
    run("ingest", "--tokenizer", deepseek(), "--input", d / "docs.jsonl", "--to", kafka_broker.uri(name),
        "--partitions", "1", "--progress", "never", "--kafka-timeout-ms", "20000")
    values = read_values(kafka_broker.bootstrap, name, 1)[0]
    assert len(values) == 1200
    return values


def transactional_topic(broker, values, partitions, pattern) -> tuple[str, dict[int, list[bytes]]]:
    """A topic written in transactions, `pattern` a list of (records, commit?) per partition in turn.

    Returns the topic and, per partition, the committed values in order."""
    ck = confluent()
    name = LocalKafka.new_topic("txn")
    create_topic(broker.bootstrap, name, partitions)
    p = ck.Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": f"tx-{name}", "linger.ms": 5})
    p.init_transactions(30)
    committed: dict[int, list[bytes]] = {q: [] for q in range(partitions)}
    it = iter(values)
    for q in range(partitions):
        for count, commit in pattern:
            p.begin_transaction()
            chunk = [next(it) for _ in range(count)]
            for v in chunk:
                p.produce(name, v, partition=q)
            if commit:
                p.commit_transaction(30)
                committed[q] += chunk
            else:
                p.flush(30)  # on the broker, then aborted: offsets a reader must pass over
                p.abort_transaction(30)
    p.flush(30)
    # A commit or abort returns once the coordinator has decided; the markers
    # reach the partitions just after. Wait until every transaction is
    # settled: the last stable offset (what read_committed sees as the end)
    # is the high watermark.
    ends = {}
    for isolation in ("read_committed", "read_uncommitted"):
        ends[isolation] = ck.Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "unused",
                                       "isolation.level": isolation})
    deadline = time.monotonic() + 30
    for q in range(partitions):
        tp = ck.TopicPartition(name, q)
        while (ends["read_committed"].get_watermark_offsets(tp, 10)[1] !=
               ends["read_uncommitted"].get_watermark_offsets(tp, 10)[1]):
            assert time.monotonic() < deadline, f"transactions of {name} not settled"
            time.sleep(0.1)
    for c in ends.values():
        c.close()
    return name, committed


# Committed runs broken by aborted ones, and a partition that ends in an
# aborted transaction (its last offsets are records nobody may read, then
# the abort marker).
PATTERN = [(37, True), (11, False), (29, True), (1, False), (53, True), (7, True), (19, False), (40, True),
           (23, False)]


def docs_of(batch) -> list[tuple[int, ...]]:
    """The documents of a pack=False batch, one per row, without padding."""
    out = []
    for row, mask in zip(batch["input_ids"], batch["attention_mask"]):
        out.append(tuple(int(x) for x in row[mask.bool()]))
    return out


def test_one_partition_with_gaps_reads_the_committed_records_in_order(documents, kafka_broker):
    import tokenfeed

    name, committed = transactional_topic(kafka_broker, documents, 1, PATTERN)
    want = [record_ids(v) for v in committed[0]]
    assert len(want) == sum(count for count, commit in PATTERN if commit)
    summary = json.loads(run("topics", kafka_broker.uri(name), "--json").stdout)
    assert summary["partitions"][0]["end_offset"] == len(PATTERN) + sum(count for count, _ in PATTERN)
    # Blocks of 16 offsets: many blocks start or end in a gap, some hold no record at all.
    ds = tokenfeed.TokenDataset(kafka_broker.uri(name), seq_len=512, batch_size=1, pack=False, shuffle=False,
                                block_records=16, window_blocks=3, epochs=1, kafka_timeout_ms=20000)
    got = [d for b in ds for d in docs_of(b)]
    assert got == want


def test_shuffled_epochs_over_gaps_hold_every_committed_record_once_and_resume_exactly(documents, kafka_broker):
    import tokenfeed

    name, committed = transactional_topic(kafka_broker, documents, 3, PATTERN)
    want = collections.Counter(record_ids(v) for q in committed for v in committed[q])
    opts = dict(seq_len=512, batch_size=2, pack=False, seed=7, block_records=16, window_blocks=4, epochs=2,
                kafka_timeout_ms=20000)
    uri = kafka_broker.uri(name)
    batches = [docs_of(b) for b in tokenfeed.TokenDataset(uri, **opts)]
    docs = [d for b in batches for d in b]
    per_epoch = sum(want.values())
    # Two epochs; the last incomplete batch (at most one document) is dropped.
    assert len(docs) in (2 * per_epoch, 2 * per_epoch - 1)
    assert collections.Counter(docs[:per_epoch]) == want
    assert docs[:per_epoch] != [record_ids(v) for q in committed for v in committed[q]]  # shuffled

    first = tokenfeed.TokenDataset(uri, **opts)
    it = iter(first)
    for _ in range(150):
        next(it)
    state = json.loads(json.dumps(first.state_dict()))
    again = tokenfeed.TokenDataset(uri, **opts)
    again.load_state_dict(state)
    assert [docs_of(b) for b in again] == batches[150:]


def test_sharded_ranks_over_gaps_resume_at_another_world_size(documents, kafka_broker):
    """Two ranks (shards=2) save at step 15; one rank loads the merged states and goes on: the global
    batches of one rank from the start, nothing lost or repeated."""
    import tokenfeed

    name, _ = transactional_topic(kafka_broker, documents, 3, PATTERN)
    uri = kafka_broker.uri(name)
    opts = dict(seq_len=96, seed=5, block_records=16, window_blocks=2, shards=2, epochs=0, kafka_timeout_ms=20000)

    def take(ds, steps):
        out = []
        for _, b in zip(range(steps), ds):  # range first: stop before taking one more batch
            out.append(b["input_ids"].tolist())
        return out

    whole = take(tokenfeed.TokenDataset(uri, batch_size=4, **opts), 40)
    ranks = [tokenfeed.TokenDataset(uri, batch_size=2, rank=r, world_size=2, **opts) for r in range(2)]
    first = [take(ds, 15) for ds in ranks]
    # Global row i of a step is rank i % 2's row i // 2.
    assert [[first[i % 2][k][i // 2] for i in range(4)] for k in range(15)] == whole[:15]
    merged = tokenfeed.merge_states([json.loads(json.dumps(ds.state_dict())) for ds in ranks])
    one = tokenfeed.TokenDataset(uri, batch_size=4, **opts)
    one.load_state_dict(merged)
    assert take(one, 25) == whole[15:]


def test_the_loader_reads_what_serve_wrote_and_resumes_exactly(kafka_broker):
    """Raw text in, `tokenfeed serve` in the middle, the loader at the end.

    serve commits small transactions (a marker after each), so the token
    topic's offsets have a gap every few dozen records."""
    import tokenfeed
    from test_serve import Instance, produce, raw_texts, wait_until

    raw, tokens = LocalKafka.new_topic("raw"), LocalKafka.new_topic("tokens")
    create_topic(kafka_broker.bootstrap, raw, 2)
    n = 2400
    texts = raw_texts(n)
    produce(kafka_broker.bootstrap, raw, texts, 2)
    s = Instance(kafka_broker, raw, tokens, "s", "--max-transaction-messages", "37")
    try:
        wait_until("every message committed", lambda: s.messages() >= n, 60)
        assert s.stop() == 0, s.log()
    finally:
        s.kill()
    uri = kafka_broker.uri(tokens)
    values = read_values(kafka_broker.bootstrap, tokens, 2)
    assert sum(len(v) for v in values.values()) == n
    summary = json.loads(run("topics", uri, "--json").stdout)
    assert summary["records"] >= n + n // 37, "serve's transactions left no markers"

    tok = tokenfeed.Tokenizer.from_file(deepseek())
    want = collections.Counter(
        tuple(tok.encode(json.loads(t)["text"] if t.startswith("{") else t, split_special_tokens=True))
        for t in texts)
    opts = dict(seq_len=256, batch_size=4, pack=False, seed=3, block_records=64, window_blocks=4, epochs=1,
                kafka_timeout_ms=20000)
    batches = [docs_of(b) for b in tokenfeed.TokenDataset(uri, **opts)]
    assert collections.Counter(d for b in batches for d in b) == want  # n is a multiple of the batch

    # Packed and shuffled, resumed from a state taken midway.
    packed = dict(seq_len=128, batch_size=4, seed=9, block_records=64, window_blocks=4, epochs=1,
                  kafka_timeout_ms=20000)
    whole = [b["input_ids"].clone() for b in tokenfeed.TokenDataset(uri, **packed)]
    assert len(whole) > 60
    first = tokenfeed.TokenDataset(uri, **packed)
    it = iter(first)
    for _ in range(41):
        next(it)
    again = tokenfeed.TokenDataset(uri, **packed)
    again.load_state_dict(json.loads(json.dumps(first.state_dict())))
    rest = [b["input_ids"] for b in again]
    assert len(rest) == len(whole) - 41
    assert all(g.equal(w) for g, w in zip(rest, whole[41:]))


def test_following_serves_output_while_it_is_written(kafka_broker):
    """follow=True over the token topic `serve` writes while raw text keeps arriving.

    Documents come while the feeder still produces; a loader made later over
    the same records gives the same batches, and a resumed one goes on
    exactly."""
    import threading

    import tokenfeed
    from test_serve import Instance, produce, raw_texts

    raw, tokens = LocalKafka.new_topic("raw"), LocalKafka.new_topic("tokens")
    create_topic(kafka_broker.bootstrap, raw, 2)
    n = 1600
    texts = raw_texts(n)
    s = Instance(kafka_broker, raw, tokens, "f", "--max-transaction-messages", "50")
    feeder = threading.Thread(target=produce, args=(kafka_broker.bootstrap, raw, texts, 2, 400.0))
    try:
        feeder.start()
        uri = kafka_broker.uri(tokens)
        opts = dict(seq_len=256, batch_size=2, pack=False, seed=5, block_records=32, window_blocks=2, epochs=0,
                    follow=True, follow_timeout_ms=30000, kafka_timeout_ms=20000)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # serve creates the topic with its first transaction
            if run("topics", uri, check=False).returncode == 0:
                break
            time.sleep(0.2)
        ds = tokenfeed.TokenDataset(uri, **opts)
        it = iter(ds)
        batches, state_at_100, during_feed = [], None, 0
        while len(batches) < 300 and time.monotonic() < deadline:
            batches.append(docs_of(next(it)))
            during_feed += feeder.is_alive()
            if len(batches) == 100:
                state_at_100 = json.loads(json.dumps(ds.state_dict()))
        assert len(batches) == 300, "the live topic did not give 300 batches within 60 s"
        assert during_feed > 0, "no batch came while the raw text was still arriving"
        m = ds.metrics()
        assert 0 < m["freshness_p50_seconds"] <= m["freshness_p99_seconds"] < 60, m
        feeder.join(timeout=60)
    finally:
        s.stop()
        s.kill()
    tok = tokenfeed.Tokenizer.from_file(deepseek())
    known = {tuple(tok.encode(json.loads(t)["text"] if t.startswith("{") else t, split_special_tokens=True))
             for t in texts}
    docs = [d for b in batches for d in b]
    assert set(docs) <= known and len(set(docs)) == len(docs) == 600  # one pass: no document twice
    later = iter(tokenfeed.TokenDataset(uri, **opts))
    assert [docs_of(next(later)) for _ in range(300)] == batches
    again = tokenfeed.TokenDataset(uri, **opts)
    again.load_state_dict(state_at_100)
    resumed = iter(again)
    assert [docs_of(next(resumed)) for _ in range(200)] == batches[100:]
