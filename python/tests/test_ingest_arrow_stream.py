"""tokenfeed.ingest on Arrow C streams (__arrow_c_stream__): tables, readers
and every string layout give the records of the same documents read from
JSONL; nulls, bad columns, a producer failing mid-stream, Ctrl-C and a second
call on the same topic."""

from __future__ import annotations

import json

import pytest

from cli_helpers import deepseek, records, write_jsonl
from table_helpers import pa, texts_for

tokenfeed = pytest.importorskip("tokenfeed")


@pytest.fixture(autouse=True)
def _needs_pyarrow():
    if pa is None:
        from conftest import missing
        missing("pyarrow is not installed (python/requirements-dev.txt)")


def _key(recs):
    return [(r["partition"], r["ids"], r["doc_seq"]) for r in recs]


@pytest.fixture(scope="module")
def docs():
    return texts_for(240, seed=7)


@pytest.fixture(scope="module")
def from_jsonl(docs, tmp_path_factory):
    """The records of `docs` ingested from a JSONL file."""
    tmp = tmp_path_factory.mktemp("jsonl")
    tokenfeed.ingest(write_jsonl(tmp / "docs.jsonl", docs), to=f"log:{tmp}/t", tokenizer=deepseek(), partitions=3,
                     progress="never")
    return _key(records(f"log:{tmp}/t"))


class OnlyTheProtocol:
    """A producer that is nothing but __arrow_c_stream__ (as polars or DuckDB
    results are, to tokenfeed): no pyarrow type is seen."""

    def __init__(self, inner):
        self._inner = inner

    def __arrow_c_stream__(self, requested_schema=None):
        return self._inner.__arrow_c_stream__(requested_schema)


def sources(docs):
    n = len(docs)
    text = pa.array(docs, pa.string())
    table = pa.table({"id": pa.array(range(n), pa.int64()), "text": text})
    # Several chunks of uneven sizes, one of them empty.
    chunked = pa.Table.from_batches([b for cut in [(0, 50), (50, 0), (50, 101), (151, n - 151)]
                                     for b in table.slice(*cut).to_batches()])
    padded = pa.table({"id": pa.array(range(n + 20), pa.int64()),
                       "text": pa.array(["before"] * 13 + docs + ["after"] * 7, pa.string())})
    nested = pa.table({"meta": pa.StructArray.from_arrays(
        [pa.array(range(n)), pa.StructArray.from_arrays([text], names=["body"])], names=["n", "inner"])})
    padded_text = padded.column("text").combine_chunks()
    # Sliced structs: the offsets are on the struct arrays, not on the strings.
    nested_padded = pa.table({"meta": pa.StructArray.from_arrays(
        [pa.array(range(n + 20)), pa.StructArray.from_arrays([padded_text], names=["body"])], names=["n", "inner"])})
    return [
        ("table", table, {}),
        ("chunks", chunked, {}),
        ("reader", pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=17)), {}),
        ("large_string", table.cast(pa.schema([("id", pa.int64()), ("text", pa.large_string())])), {}),
        ("string_view", table.cast(pa.schema([("id", pa.int64()), ("text", pa.string_view())])), {}),
        ("dictionary", pa.table({"text": text.dictionary_encode()}), {}),
        # Slices: the batches' buffers start before the rows (non-zero offsets).
        ("sliced", padded.slice(13, n), {}),
        ("sliced_reader", pa.RecordBatchReader.from_batches(
            padded.schema, [b.slice(0) for b in padded.slice(13, n).to_batches(max_chunksize=40)]), {}),
        ("nested", nested, {"field": "meta.inner.body"}),
        ("nested_sliced", nested_padded.slice(13, n), {"field": "meta.inner.body"}),
        ("protocol_only", OnlyTheProtocol(table), {}),
    ]


def test_every_layout_gives_the_records_of_the_same_documents_from_jsonl(tmp_path, docs, from_jsonl):
    for name, source, extra in sources(docs):
        stats = tokenfeed.ingest(source, to=f"log:{tmp_path}/{name}", tokenizer=deepseek(), partitions=3,
                                 progress="never", **extra)
        assert stats["complete"] and stats["documents_written"] == len(docs) and stats["files"] == 1, name
        recs = records(f"log:{tmp_path}/{name}")
        assert _key(recs) == from_jsonl, name
    # The source is the stream and the row: line = row index + 1.
    by_seq = sorted(recs, key=lambda r: r["doc_seq"])
    assert [r["source"]["path"] for r in by_seq[:2]] == ["arrow-stream"] * 2
    assert [(r["source"]["line"], r["source"]["byte_offset"]) for r in by_seq[:3]] == [(1, 0), (2, 1), (3, 2)]


def test_nulls_are_missing_field_drops_named_by_row(tmp_path):
    table = pa.table({"text": pa.array(["one", None, "three", None], pa.large_string()),
                      "meta": pa.array([{"body": "a"}, {"body": "b"}, None, {"body": None}])})
    stats = tokenfeed.ingest(table, to=f"log:{tmp_path}/t", tokenizer=deepseek(), progress="never",
                             rejects=tmp_path / "rejects.jsonl")
    assert stats["documents_read"] == 4 and stats["documents_written"] == 2
    assert stats["dropped_by_reason"]["missing_field"] == 2
    rejects = [json.loads(line) for line in (tmp_path / "rejects.jsonl").read_text().splitlines()]
    assert [(r["file"], r["line"], r["reason"]) for r in rejects] == [("arrow-stream", 2, "missing_field"),
                                                                      ("arrow-stream", 4, "missing_field")]
    # A null struct makes its field null.
    stats = tokenfeed.ingest(table, to=f"log:{tmp_path}/u", tokenizer=deepseek(), field="meta.body",
                             progress="never")
    assert stats["documents_written"] == 2 and stats["dropped_by_reason"]["missing_field"] == 2


def test_bad_columns_and_options_are_refused_before_anything_is_written(tmp_path):
    table = pa.table({"text": ["one", "two"], "n": [1, 2], "meta": [{"a": 1}, {"a": 2}]})
    refused = [
        ({"field": "body"}, r"the Arrow stream has no column 'body' \(its columns: text, n, meta\); give the text "
                            r"column with field="),
        ({"field": "n"}, "the Arrow stream's column 'n' is int64, not a string column"),
        ({"field": "n.x"}, "the Arrow stream's column 'n.x': 'n' is int64, not a struct with a field 'x'"),
        ({"field": "meta.b"}, r"has no column 'meta.b' \('meta' has the fields: a\)"),
        # Checked before the topic is opened, though the reader that uses it
        # is made later, on the reader thread.
        ({"max_doc_bytes": 0}, "the maximum document size must be between 1 byte"),
    ]
    for options, message in refused:
        with pytest.raises(tokenfeed.InvalidArgumentError, match=message):
            tokenfeed.ingest(table, to=f"log:{tmp_path}/t", tokenizer=deepseek(), progress="never", **options)
    for option in ("format", "text_mode"):
        with pytest.raises(TypeError, match=f"{option}= applies to files"):
            tokenfeed.ingest(table, to=f"log:{tmp_path}/t", tokenizer=deepseek(), **{option: "jsonl"})
    assert not (tmp_path / "t").exists()


def test_a_column_named_with_dots_anywhere_is_selectable(tmp_path):
    # A top-level name is taken as it is: the JSON field's rules do not apply.
    table = pa.table({".a..b.": ["one", "two"], "a": [1, 2]})
    stats = tokenfeed.ingest(table, to=f"log:{tmp_path}/t", tokenizer=deepseek(), field=".a..b.", progress="never")
    assert stats["documents_written"] == 2


def test_dictionaries_with_int8_and_int64_indices(tmp_path, docs):
    values = pa.array(docs[:50], pa.string())
    indices = [i * 7 % 50 for i in range(120)] + [None]
    plain = pa.table({"text": pa.array([docs[i] if i is not None else None for i in indices], pa.string())})
    # Values repeat, so deduplication drops the repeats: the same in both.
    written = tokenfeed.ingest(plain, to=f"log:{tmp_path}/plain", tokenizer=deepseek(), partitions=2,
                               progress="never")["documents_written"]
    expected = _key(records(f"log:{tmp_path}/plain"))
    for index_type in (pa.int8(), pa.int64()):
        column = pa.DictionaryArray.from_arrays(pa.array(indices, index_type), values)
        uri = f"log:{tmp_path}/{index_type}"
        stats = tokenfeed.ingest(pa.table({"text": column}), to=uri, tokenizer=deepseek(), partitions=2,
                                 progress="never")
        assert stats["documents_written"] == written and stats["dropped_by_reason"]["missing_field"] == 1, index_type
        assert _key(records(uri)) == expected, index_type


def test_a_stream_stopped_by_strict_says_it_cannot_be_resumed(tmp_path):
    table = pa.table({"text": pa.array(["one", None, "three"], pa.string())})
    with pytest.raises(tokenfeed.InvalidArgumentError, match=r"an Arrow stream cannot be resumed: write its "
                                                             r"remaining rows.* to a new topic") as e:
        tokenfeed.ingest(table, to=f"log:{tmp_path}/t", tokenizer=deepseek(), strict=True, progress="never")
    assert "call again to resume" not in str(e.value)
    assert e.value.stats["documents_written"] == 1


def _batches_then(error, docs, per_batch=10, good=3):
    schema = pa.schema([("text", pa.string())])

    def gen():
        for i in range(good):
            yield pa.record_batch([pa.array(docs[i * per_batch:(i + 1) * per_batch])], schema=schema)
        if error is not None:
            raise error
    return pa.RecordBatchReader.from_batches(schema, gen())


def test_a_python_generator_behind_a_reader_is_read_and_its_error_ends_the_run(tmp_path, docs):
    # The batches come from Python on the ingest's reader thread: pyarrow takes
    # the GIL itself, which this call has released.
    stats = tokenfeed.ingest(_batches_then(None, docs), to=f"log:{tmp_path}/ok", tokenizer=deepseek(),
                             progress="never")
    assert stats["complete"] and stats["documents_written"] == 30
    with pytest.raises(tokenfeed.StorageError, match=r"(?s)^the Arrow stream could not be read to the end: "
                                                     r"I/O error: 'arrow-stream': the producer failed to give batch 3 "
                                                     r"\(error \d+: .*the source ran dry.*a stream cannot be "
                                                     r"resumed: write its remaining rows to a new topic\)$") as e:
        tokenfeed.ingest(_batches_then(ValueError("the source ran dry"), docs), to=f"log:{tmp_path}/t",
                         tokenizer=deepseek(), partitions=2, progress="never")
    stats = e.value.stats
    assert not stats["complete"] and stats["documents_written"] == 30
    assert len(stats["incomplete_files"]) == 1 and "reading stopped after row 29" in stats["incomplete_files"][0]
    assert sorted(r["doc_seq"] for r in records(f"log:{tmp_path}/t")) == list(range(30))


def test_a_second_call_on_the_same_topic_is_refused(tmp_path, docs):
    table = pa.table({"text": docs[:20]})
    tokenfeed.ingest(table, to=f"log:{tmp_path}/t", tokenizer=deepseek(), progress="never")
    # A stream cannot be checked to be the same again: no resume that could skip rows.
    with pytest.raises(tokenfeed.InvalidArgumentError, match=r"written by another ingest .*: an Arrow stream's run "
                                                             r"cannot be resumed .*write it to a new topic") as e:
        tokenfeed.ingest(table, to=f"log:{tmp_path}/t", tokenizer=deepseek(), progress="never")
    assert "resuming needs the same" not in str(e.value)
    assert len(records(f"log:{tmp_path}/t")) == 20


def test_ctrl_c_while_a_generator_feeds_the_stream(tmp_path):
    import subprocess
    import sys

    # The generator interrupts its own process before its batch 200 (of 50
    # rows) and then gives a batch every 50 ms; the main thread looks for
    # signals every 100 ms and the reader stops at the next row once asked.
    # So the run stops with the topic consistent a few batches after 200 (not
    # at the end of the 10 000) and KeyboardInterrupt is raised.
    # SIGINT restored: a process started from a background job inherits it
    # ignored, and Python then never raises KeyboardInterrupt.
    script = ("import os, signal, sys, time, pyarrow as pa, tokenfeed\n"
              "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
              "schema = pa.schema([('text', pa.string())])\n"
              "def gen():\n"
              "    for i in range(10_000):\n"
              "        if i == 200:\n"
              "            os.kill(os.getpid(), signal.SIGINT)\n"
              "        if i > 200:\n"
              "            time.sleep(0.05)\n"
              "        yield pa.record_batch([pa.array([f'doc {i} {j}' for j in range(50)])], schema=schema)\n"
              "tokenfeed.ingest(pa.RecordBatchReader.from_batches(schema, gen()), to=sys.argv[1],\n"
              "                 tokenizer=sys.argv[2], progress='never', batch_bytes=1024)\n"
              "print('finished', flush=True)\n")
    uri = f"log:{tmp_path}/t"
    p = subprocess.run([sys.executable, "-c", script, uri, deepseek()], capture_output=True, text=True, timeout=120)
    assert p.returncode != 0 and "finished" not in p.stdout, p.stderr[-2000:]
    assert "KeyboardInterrupt" in p.stderr, p.stderr[-2000:]
    seqs = sorted(r["doc_seq"] for r in records(uri))
    # Batches 0-199 came before the signal and at most ten more (500 ms) after
    # it; what was read but not yet written when the stop came is not written.
    assert 0 < len(seqs) <= 210 * 50 and seqs == list(range(len(seqs))), len(seqs)


def test_a_polars_frame_without_pyarrow(tmp_path, docs, from_jsonl):
    """polars exports string_view columns through its own C stream; pyarrow is
    never imported (the run is in a process of its own to show it)."""
    pytest.importorskip("polars")
    import subprocess
    import sys

    src = write_jsonl(tmp_path / "docs.jsonl", docs)
    script = ("import json, sys, polars as pl, tokenfeed\n"
              "df = pl.read_ndjson(sys.argv[1]).with_row_index('id')\n"
              "stats = tokenfeed.ingest(df, to=sys.argv[2], tokenizer=sys.argv[3], partitions=3, progress='never')\n"
              "print(json.dumps({'written': stats['documents_written'], 'pyarrow': 'pyarrow' in sys.modules}))\n")
    uri = f"log:{tmp_path}/t"
    p = subprocess.run([sys.executable, "-c", script, str(src), uri, deepseek()], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert json.loads(p.stdout.strip().splitlines()[-1]) == {"written": len(docs), "pyarrow": False}
    assert _key(records(uri)) == from_jsonl
