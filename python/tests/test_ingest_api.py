"""tokenfeed.ingest: the ingest from Python, on files or on documents given as
str, with the command's options by name and its statistics returned."""

from __future__ import annotations

import json
import pathlib

import pytest

from cli_helpers import deepseek, records, run, write_jsonl

tokenfeed = pytest.importorskip("tokenfeed")


def texts(n=200):
    return [f"document {i}: " + "words and more words " * (i % 7 + 1) for i in range(n)]


def test_documents_from_an_iterable_become_records_in_order(tmp_path):
    docs = texts()
    stats = tokenfeed.ingest((d for d in docs), to=f"log:{tmp_path}/t", tokenizer=deepseek(), partitions=2,
                             add_eos=True, progress="never")
    assert stats["complete"] and stats["documents_read"] == stats["documents_written"] == len(docs)
    assert stats["files"] == 1 and stats["tokens_written"] > 0
    recs = sorted(records(f"log:{tmp_path}/t"), key=lambda r: r["doc_seq"])
    tok = tokenfeed.Tokenizer.from_file(deepseek())
    # The cleaning trims each document, as for files.
    assert [r["ids"] for r in recs] == [tok.encode(d.strip()) + [tok.eos_id] for d in docs]
    assert {r["partition"] for r in recs} == {0, 1}


def test_files_give_the_same_records_as_the_command(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    write_jsonl(d / "a.jsonl", texts()[:120])
    write_jsonl(d / "b.jsonl", texts()[120:])
    run("ingest", "--tokenizer", deepseek(), "--input", d, "--to", f"log:{tmp_path}/cli", "--partitions", "3",
        "--progress", "never")
    from_cli = records(f"log:{tmp_path}/cli")
    for name, source in [("dir", str(d)), ("glob", f"{d}/*.jsonl"), ("paths", [d / "b.jsonl", d / "a.jsonl"]),
                         ("pathlike", pathlib.Path(d))]:
        stats = tokenfeed.ingest(source, to=f"log:{tmp_path}/{name}", tokenizer=pathlib.Path(deepseek()),
                                 partitions=3, progress="never")
        assert stats["documents_written"] == 200, name
        assert [(r["partition"], r["ids"], r["doc_seq"]) for r in records(f"log:{tmp_path}/{name}")] == \
            [(r["partition"], r["ids"], r["doc_seq"]) for r in from_cli], name


def test_a_second_call_resumes_and_finds_nothing_to_do(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    write_jsonl(d / "a.jsonl", texts())
    tokenfeed.ingest(d / "a.jsonl", to=f"log:{tmp_path}/t", tokenizer=deepseek(), partitions=4, progress="never")
    # No partitions= this time: an existing topic keeps its own count.
    again = tokenfeed.ingest(d / "a.jsonl", to=f"log:{tmp_path}/t", tokenizer=deepseek(), progress="never")
    assert again["resumed"] and again["documents_written"] == 0
    assert again["documents_skipped_already_in_topic"] == 200
    assert tokenfeed._ext._ingest_defaults()["partitions"] == 0


def test_options_are_checked_by_name(tmp_path):
    uri, tok = f"log:{tmp_path}/t", deepseek()
    with pytest.raises(TypeError, match="unexpected keyword argument 'partition'"):
        tokenfeed.ingest(["x"], to=uri, tokenizer=tok, partition=2)
    with pytest.raises(tokenfeed.InvalidArgumentError, match="partition_by must be one of 'round-robin', 'hash'"):
        tokenfeed.ingest(["x"], to=uri, tokenizer=tok, partition_by="random")
    with pytest.raises(ValueError, match="unknown input format 'csv'"):
        tokenfeed.ingest(tmp_path, to=uri, tokenizer=tok, format="csv")
    with pytest.raises(TypeError, match="format= applies to files"):
        tokenfeed.ingest(["x"], to=uri, tokenizer=tok, format="text")
    with pytest.raises(TypeError, match="document 1 of source is bytes"):
        tokenfeed.ingest(["x", b"y"], to=uri, tokenizer=tok)
    with pytest.raises(TypeError, match=r"source\[1\] is str, but source\[0\] is a path"):
        tokenfeed.ingest([tmp_path, "y"], to=uri, tokenizer=tok)
    with pytest.raises(TypeError, match="not bytes"):
        tokenfeed.ingest(b"data.jsonl", to=uri, tokenizer=tok)
    with pytest.raises(TypeError, match="dedup"):
        tokenfeed.ingest(["x"], to=uri, tokenizer=tok, dedup="no")
    with pytest.raises(tokenfeed.NotFoundError, match="does-not-exist"):
        tokenfeed.ingest(tmp_path / "does-not-exist", to=uri, tokenizer=tok)
    assert not (tmp_path / "t").exists()
    # Every option, given its own default, is taken and changes nothing.
    defaults = tokenfeed._ext._ingest_defaults()
    assert set(defaults) == set(tokenfeed._ingest.IngestOptions.__annotations__)
    given = {k: v for k, v in defaults.items() if k not in ("format", "text_mode", "field")}
    stats = tokenfeed.ingest(["one", "two"], to=uri, tokenizer=tok, **given)
    assert stats["documents_written"] == 2


def test_input_that_is_not_text_is_refused_and_nothing_is_written(tmp_path):
    f = tmp_path / "data.jsonl"
    f.write_bytes(b'{"text": "fine"}\n' + bytes(range(256)))
    with pytest.raises(tokenfeed.InvalidArgumentError,
                       match=r"data.jsonl': binary data \(a NUL byte at byte offset 17\)"):
        tokenfeed.ingest(f, to=f"log:{tmp_path}/t", tokenizer=deepseek())
    assert not (tmp_path / "t").exists()


def test_a_run_that_refused_input_raises_with_its_statistics(tmp_path):
    f = tmp_path / "a.jsonl"
    f.write_text('{"text": "first"}\n{"text": broken\n{"text": "third"}\n')
    with pytest.raises(tokenfeed.InvalidArgumentError, match="the documents before it were written") as e:
        tokenfeed.ingest(f, to=f"log:{tmp_path}/t", tokenizer=deepseek(), strict=True, progress="never",
                         rejects=tmp_path / "rejects.jsonl")
    assert e.value.stats["documents_written"] == 1 and e.value.stats["dropped_by_reason"]["bad_json"] == 1
    assert [json.loads(line)["line"] for line in (tmp_path / "rejects.jsonl").read_text().splitlines()] == [2]
    # Without strict the bad line is dropped, counted, and the run completes.
    stats = tokenfeed.ingest(f, to=f"log:{tmp_path}/u", tokenizer=deepseek(), progress="never")
    assert stats["complete"] and stats["documents_written"] == 2 and stats["documents_dropped"] == 1


def test_ctrl_c_stops_the_run_and_the_same_call_resumes(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    f = tmp_path / "big.jsonl"
    write_jsonl(f, (f"document {i} " + "lorem ipsum dolor sit amet " * 20 for i in range(300_000)))
    # Python raises KeyboardInterrupt only where SIGINT is not ignored, and a
    # process started from a background job inherits it ignored: restore it.
    script = ("import signal, sys, tokenfeed\n"
              "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
              "print('started', flush=True)\n"
              "tokenfeed.ingest(sys.argv[1], to=sys.argv[2], tokenizer=sys.argv[3], partitions=2, threads=1,\n"
              "                 batch_bytes=4096, progress='never')\n"
              "print('finished', flush=True)\n")
    uri = f"log:{tmp_path}/t"
    p = subprocess.Popen([sys.executable, "-c", script, str(f), uri, deepseek()], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "started"
    # Interrupted once the first records are in the topic, well before the end.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and p.poll() is None:
        if sum(s.stat().st_size for s in (tmp_path / "t").rglob("*.seg")) > 100_000:
            break
        time.sleep(0.005)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode != 0 and "finished" not in out, (out, err[-2000:])
    assert "KeyboardInterrupt" in err, err[-2000:]
    partial = len(records(uri))
    assert 0 < partial < 300_000
    stats = tokenfeed.ingest(f, to=uri, tokenizer=deepseek(), progress="never")
    assert stats["resumed"] and stats["documents_written"] == 300_000 - partial
    assert sorted(r["doc_seq"] for r in records(uri)) == list(range(300_000))


def _pyarrow():
    try:
        import pyarrow
    except ImportError:
        from conftest import missing
        missing("pyarrow is not installed (python/requirements-dev.txt)")
    return pyarrow


# Arrow streams (__arrow_c_stream__): test_ingest_arrow_stream.py.


def test_a_parquet_file_is_read_or_refused_as_not_built_in(tmp_path):
    pa = _pyarrow()
    import pyarrow.parquet as pq
    path = tmp_path / "rows.parquet"
    pq.write_table(pa.table({"text": texts(30)}), path, row_group_size=8)
    try:
        stats = tokenfeed.ingest(path, to=f"log:{tmp_path}/t", tokenizer=deepseek(), progress="never")
    except tokenfeed.InvalidArgumentError as e:
        # The module pyproject.toml builds (and the wheel) has no Parquet input.
        assert "rows.parquet': a Parquet file (PAR1 at the start and at the end of the file); Parquet support " \
               "was not built in" in str(e)
        assert not (tmp_path / "t").exists()
    else:
        assert stats["documents_written"] == 30
