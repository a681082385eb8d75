"""tokenfeed ingest / inspect / topics on the embedded log, end to end."""

from __future__ import annotations

import gzip
import json
import os
import pathlib
import random
import re
import subprocess
import sys
import zlib

import pytest

from cli_helpers import cli, deepseek, records, run, run_killed_until_done, write_jsonl
from conftest import ROOT


def corpus_texts(n=3000, seed=3):
    rng = random.Random(seed)
    words = ["alpha", "beta", "数据", "管道", "テキスト", "한국어", "données", "🙂", "1234", "x=y+1;", "\n"]
    return [" ".join(rng.choice(words) for _ in range(rng.randint(1, 60))) + f" #{i}" for i in range(n)]


@pytest.fixture
def corpus(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    texts = corpus_texts()
    write_jsonl(d / "a.jsonl", texts[:1500])
    write_jsonl(d / "b.jsonl", texts[1500:])
    return d, texts


def ingest(tmp, inputs, topic, *extra, check=True):
    return run("ingest", "--tokenizer", deepseek(), "--input", *inputs, "--to", f"log:{tmp}/{topic}",
               "--progress", "never", *extra, check=check)


def test_every_document_once_in_order(tmp_path, corpus):
    d, texts = corpus
    ingest(tmp_path, [d], "t", "--partitions", "3")
    recs = records(f"log:{tmp_path}/t")
    assert len(recs) == len(texts)
    assert sorted(r["doc_seq"] for r in recs) == list(range(len(texts)))
    for p in range(3):
        seqs = [r["doc_seq"] for r in recs if r["partition"] == p]
        assert seqs == sorted(seqs) and all(s % 3 == p for s in seqs)
    import tokenfeed
    tok = tokenfeed.Tokenizer.from_file(deepseek())
    by_seq = {r["doc_seq"]: r for r in recs}
    for seq in (0, 1, 777, len(texts) - 1):
        assert by_seq[seq]["ids"] == tok.encode(texts[seq].strip(), split_special_tokens=True)
    topics = json.loads(run("topics", f"log:{tmp_path}/t", "--json").stdout)
    assert topics["records"] == len(texts) and len(topics["partitions"]) == 3


def test_same_records_whatever_the_thread_count(tmp_path, corpus):
    d, _ = corpus
    ingest(tmp_path, [d], "one", "--partitions", "4", "--threads", "1")
    ingest(tmp_path, [d], "two", "--partitions", "4", "--threads", "2", "--batch-bytes", "4096")
    assert records(f"log:{tmp_path}/one") == records(f"log:{tmp_path}/two")


def test_hash_partitioning_and_bos_eos(tmp_path, corpus):
    d, texts = corpus
    ingest(tmp_path, [d], "h", "--partitions", "4", "--partition-by", "hash", "--add-bos", "--add-eos")
    recs = records(f"log:{tmp_path}/h")
    assert len(recs) == len(texts)
    assert all(r["ids"][0] == 0 and r["ids"][-1] == 1 for r in recs)  # DeepSeek-V3's BOS and EOS
    assert len({r["partition"] for r in recs}) == 4
    # The records say so, for a loader that would add them again.
    assert all(r["attributes"]["ends"] == "bos,eos" for r in recs)
    ingest(tmp_path, [d], "plain")
    assert all("ends" not in r["attributes"] for r in records(f"log:{tmp_path}/plain")[:50])


@pytest.mark.parametrize("fsync", ["none", "each-batch"])
def test_killed_and_restarted_ingest_equals_an_uninterrupted_run(tmp_path, fsync):
    d = tmp_path / "in"
    d.mkdir()
    texts = corpus_texts(60000, seed=9)
    for k in range(4):
        write_jsonl(d / f"part{k}.jsonl", texts[k * 15000:(k + 1) * 15000])
    ingest(tmp_path, [d], "ref", "--partitions", "3", "--fsync", fsync, "--batch-bytes", "16384", "--threads", "2")
    want = records(f"log:{tmp_path}/ref")
    rng = random.Random(5)
    kills = 0
    for round_ in range(4):
        topic = f"t{round_}"
        uri = f"log:{tmp_path}/{topic}"
        args = [cli(), "ingest", "--tokenizer", deepseek(), "--input", str(d), "--to", uri,
                "--partitions", "3", "--fsync", fsync, "--batch-bytes", "16384", "--threads", "2",
                "--progress", "never"]
        kills += run_killed_until_done(args, uri, len(want), rng, kills=5, share=(0.05, 0.9))
        assert records(uri) == want, f"round {round_}"
    assert kills >= 2, "runs were hardly ever interrupted: the test proved too little"


def test_finished_ingest_run_again_adds_nothing(tmp_path, corpus):
    d, texts = corpus
    ingest(tmp_path, [d], "t", "--partitions", "2", "--stats-json", tmp_path / "s1.json")
    ingest(tmp_path, [d], "t", "--partitions", "2", "--stats-json", tmp_path / "s2.json")
    s2 = json.loads((tmp_path / "s2.json").read_text())
    assert s2["documents_written"] == 0 and s2["documents_skipped_already_in_topic"] == len(texts)
    assert len(records(f"log:{tmp_path}/t")) == len(texts)


def test_the_same_inputs_named_another_way_resume(tmp_path, corpus):
    # Relative in one run, absolute in the next, then through a link to the
    # directory: the same files, so the second and third runs add nothing.
    d, texts = corpus
    rel = os.path.relpath(d, tmp_path)
    uri = f"log:{tmp_path}/t"
    common = ["ingest", "--tokenizer", deepseek(), "--to", uri, "--progress", "never", "--partitions", "2"]
    subprocess.run([cli(), *common, "--input", rel, "--stats-json", "s1.json"], cwd=tmp_path, check=True,
                   capture_output=True)
    link = tmp_path / "link"
    link.symlink_to(d, target_is_directory=True)
    for n, spelled in ((2, str(d)), (3, str(link))):
        r = subprocess.run([cli(), *common, "--input", spelled, "--stats-json", f"s{n}.json"], cwd=tmp_path,
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        s = json.loads((tmp_path / f"s{n}.json").read_text())
        assert s["documents_written"] == 0 and s["documents_skipped_already_in_topic"] == len(texts)
    assert len(records(uri)) == len(texts)


def test_other_settings_refuse_to_resume(tmp_path, corpus):
    d, _ = corpus
    ingest(tmp_path, [d], "t", "--partitions", "2")
    r = ingest(tmp_path, [d], "t", "--partitions", "2", "--add-bos", check=False)
    assert r.returncode != 0 and "another ingest" in r.stderr
    r = ingest(tmp_path, [d], "t", "--partitions", "3", check=False)
    assert r.returncode != 0 and "partitions" in r.stderr


def test_bad_documents_are_counted_listed_and_skipped(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    lines = [
        json.dumps({"text": "good one"}),
        "{not json",
        json.dumps({"other": "no text field"}),
        json.dumps({"text": 42}),
        json.dumps({"text": "good two"}),
        json.dumps({"text": "good two"}),  # duplicate
        json.dumps({"text": "   "}),       # empty after trimming
    ]
    raw = ("\ufeff" + "\r\n".join(lines) + "\r\n").encode()
    raw += b'{"text": "bad \xff utf8"}\n'
    (d / "mixed.jsonl").write_bytes(raw)
    (d / "empty.jsonl").write_bytes(b"")
    ingest(tmp_path, [d], "t", "--rejects", tmp_path / "rejects.jsonl", "--stats-json", tmp_path / "s.json",
           "--utf8", "reject")
    stats = json.loads((tmp_path / "s.json").read_text())
    assert stats["documents_written"] == 2
    by = stats["dropped_by_reason"]
    assert by["bad_json"] == 1 and by["missing_field"] == 1 and by["not_a_string"] == 1
    assert by["duplicate"] == 1 and by["empty"] == 1 and by["invalid_utf8"] == 1
    rejects = [json.loads(l) for l in (tmp_path / "rejects.jsonl").read_text().splitlines()]
    assert {(r["reason"], r["line"]) for r in rejects} >= {("bad_json", 2), ("missing_field", 3),
                                                            ("not_a_string", 4), ("invalid_utf8", 8)}
    assert all(r["file"].endswith("mixed.jsonl") for r in rejects)
    texts = [r["ids"] for r in records(f"log:{tmp_path}/t")]
    assert len(texts) == 2
    strict = ingest(tmp_path, [d], "strict", "--strict", check=False)
    assert strict.returncode != 0 and "mixed.jsonl:2" in strict.stderr


def test_truncated_archives_keep_what_was_read_and_fail(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    data = "".join(json.dumps({"text": f"document {i} " * 20}) + "\n" for i in range(2000)).encode()
    (d / "a.jsonl.gz").write_bytes(gzip.compress(data)[:-2000])
    r = ingest(tmp_path, [d], "t", "--stats-json", tmp_path / "s.json", check=False)
    assert r.returncode != 0 and "a.jsonl.gz" in r.stderr and "could not be read to the end" in r.stderr
    stats = json.loads((tmp_path / "s.json").read_text()) if (tmp_path / "s.json").exists() else None
    got = records(f"log:{tmp_path}/t")
    assert 0 < len(got) < 2000  # the documents before the cut, nothing half-read
    assert [r["doc_seq"] for r in got] == list(range(len(got)))
    assert stats is None or stats["incomplete_files"]


def test_whole_run_problems_stop_before_writing(tmp_path, corpus):
    d, _ = corpus
    r = ingest(tmp_path, [tmp_path / "does-not-exist"], "t", check=False)
    assert r.returncode != 0 and "does-not-exist" in r.stderr
    assert not (tmp_path / "t").exists()
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    r = run("ingest", "--tokenizer", deepseek(), "--input", d, "--to", f"log:{blocker}/t", "--progress", "never",
            check=False)
    assert r.returncode != 0 and "file-not-dir" in r.stderr
    r = ingest(tmp_path, [d], "t", "--no-create", check=False)
    assert r.returncode != 0 and "does not exist" in r.stderr
    r = run("ingest", "--tokenizer", deepseek(), "--input", d, "--to", "nonsense://x", check=False)
    assert r.returncode != 0 and "log:DIR/TOPIC" in r.stderr


def test_a_100_mb_line_is_rejected_with_bounded_memory(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    with open(d / "big.jsonl", "w") as f:
        f.write(json.dumps({"text": "short"}) + "\n")
        f.write('{"text": "' + "x" * (100 << 20) + '"}\n')
        f.write(json.dumps({"text": "after"}) + "\n")
    # A wrapper process whose only child is the ingest measures the ingest's
    # peak memory alone (this test process has had other children).
    wrapper = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(r.returncode)")
    out = subprocess.run([sys.executable, "-c", wrapper, cli(), "ingest", "--tokenizer", deepseek(), "--input",
                          str(d), "--to", f"log:{tmp_path}/t", "--progress", "never", "--max-doc-bytes",
                          str(1 << 20), "--stats-json", str(tmp_path / "s.json")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    peak_kb = int(out.stdout.split()[-1])
    stats = json.loads((tmp_path / "s.json").read_text())
    assert stats["documents_written"] == 2 and stats["dropped_by_reason"]["too_long"] == 1
    assert 0 < peak_kb < 400 * 1024, f"peak resident memory {peak_kb} KiB"


def test_inspect_ranges_and_errors(tmp_path, corpus):
    d, texts = corpus
    ingest(tmp_path, [d], "t", "--partitions", "2")
    uri = f"log:{tmp_path}/t"
    one = [json.loads(l) for l in run("inspect", uri, "--partition", "1", "--offset", "5", "--count", "3",
                                      "--json").stdout.splitlines()]
    assert [(r["partition"], r["offset"]) for r in one] == [(1, 5), (1, 6), (1, 7)]
    decoded = run("inspect", uri, "--count", "1", "--decode", "--tokenizer", deepseek()).stdout
    assert texts[0].split()[0] in decoded
    assert "no partition 9" in run("inspect", uri, "--partition", "9", check=False).stderr
    assert "past it" in run("inspect", uri, "--partition", "0", "--offset", "999999", check=False).stderr
    assert run("topics", f"log:{tmp_path}/missing", check=False).returncode != 0


def png_bytes() -> bytes:
    """A valid one-pixel PNG image."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return len(data).to_bytes(4, "big") + kind + data + zlib.crc32(kind + data).to_bytes(4, "big")
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", bytes([0, 0, 0, 1, 0, 0, 0, 1, 8, 0, 0, 0, 0]))
            + chunk(b"IDAT", zlib.compress(b"\x00\x00")) + chunk(b"IEND", b""))


def parquet_bytes() -> bytes:
    """The shape of a Parquet file: its magic, a page header, values, a footer and the magic again."""
    return b"PAR1" + bytes([0x15, 0x04, 0x15, 0x80, 0x01, 0x15, 0x80, 0x01]) + b"values" * 50 + \
        bytes([0x1C, 0, 0, 0]) + b"PAR1"


def refused(tmp_path, inputs, *extra):
    """Runs an ingest that must be refused before it writes: its stderr."""
    r = ingest(tmp_path, inputs, "t", *extra, check=False)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert "Nothing was read or written." in r.stderr, r.stderr
    assert not (tmp_path / "t").exists()  # not even the topic was created
    return r.stderr


@pytest.mark.parametrize("name,content,says", [
    ("export.txt", parquet_bytes(), "export.txt': a Parquet file (PAR1 at the start and at the end of the file)"),
    ("picture.txt", png_bytes(), "picture.txt': a PNG image (its PNG signature at the start); an image is not text"),
    ("records.jsonl", b'{"text": "fine"}\n' + bytes(range(256)) * 8,
     "records.jsonl': binary data (a NUL byte at byte offset 17)"),
    ("packed.jsonl.gz", gzip.compress(b'{"text": "fine"}\n' * 10 + bytes(range(256))),
     "packed.jsonl.gz': binary data (a NUL byte at uncompressed byte offset 170)"),
    ("slides.pdf.txt", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n", "slides.pdf.txt': a PDF document"),
    ("notes.txt", "UTF-16 text".encode("utf-16"), "notes.txt': UTF-16 text (a UTF-16 little-endian byte-order mark"),
])
def test_input_that_is_not_text_is_refused_before_anything_is_written(tmp_path, name, content, says):
    d = tmp_path / "in"
    d.mkdir()
    write_jsonl(d / "a_good.jsonl", ["a good document"])
    (d / name).write_bytes(content)
    stderr = refused(tmp_path, [d])
    assert says in stderr, stderr
    assert "a_good.jsonl" not in stderr  # only the refused file is named
    # Named alone, it is refused in the same way.
    assert says in refused(tmp_path, [d / name])


def parquet_built_in() -> bool:
    """Whether the program reads Parquet: its build made the Parquet plugin."""
    return (pathlib.Path(cli()).resolve().parents[2] / "lib" / "libtokenfeed_arrow.so").exists()


def test_a_parquet_file_is_read_as_parquet_or_refused_as_not_built_in(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    (d / "data.parquet").write_bytes(parquet_bytes())  # the magic and a footer, but no valid metadata
    r = ingest(tmp_path, [d / "data.parquet"], "t", check=False)
    if parquet_built_in():
        # Read as Parquet, by its name: the reader names the file and what is wrong.
        assert r.returncode == 3, r.stderr
        assert f"'{d / 'data.parquet'}': not a readable Parquet file" in r.stderr, r.stderr
    else:
        assert r.returncode == 1, r.stderr
        assert ("data.parquet': a Parquet file (PAR1 at the start and at the end of the file); Parquet support was "
                "not built in") in r.stderr, r.stderr


def test_every_refused_input_is_listed_and_an_existing_topic_is_left_as_it_was(tmp_path, corpus):
    d, texts = corpus
    ingest(tmp_path, [d], "t")
    before = records(f"log:{tmp_path}/t")
    (d / "z1.png").write_bytes(png_bytes())
    (d / "z2.txt").write_bytes(b"x" * 100 + b"\x00")
    r = ingest(tmp_path, [d], "t", check=False)
    assert r.returncode == 1, r.stderr
    assert "2 inputs are not text:" in r.stderr and "z1.png': a PNG image" in r.stderr
    assert "z2.txt': binary data (a NUL byte at byte offset 100)" in r.stderr
    assert records(f"log:{tmp_path}/t") == before and len(before) == len(texts)


def test_a_binary_format_name_is_refused_unless_the_format_is_given(tmp_path):
    f = tmp_path / "exported.avro"
    f.write_text("plain text, whatever the name says\n")
    stderr = refused(tmp_path, [f])
    assert "exported.avro': named like an Avro file (its extension .avro)" in stderr
    assert "text or jsonl format" in stderr
    ingest(tmp_path, [f], "t", "--format", "text")
    assert len(records(f"log:{tmp_path}/t")) == 1
    # Its bytes are examined whatever the format: a PNG is a PNG.
    (tmp_path / "shot.txt").write_bytes(png_bytes())
    r = ingest(tmp_path, [tmp_path / "shot.txt"], "u", "--format", "text", check=False)
    assert r.returncode == 1 and "a PNG image" in r.stderr


def test_text_in_another_encoding_is_still_text(tmp_path):
    # Latin-1 and KOI8-R bytes are invalid UTF-8 throughout, and terminal colour
    # codes are control bytes: all still text, for the UTF-8 policy to handle.
    d = tmp_path / "in"
    d.mkdir()
    (d / "latin1.txt").write_bytes("café crème brûlée\n".encode("latin-1"))
    (d / "koi8.txt").write_bytes("привет мир\n".encode("koi8-r"))
    (d / "log.txt").write_bytes(b"\x1b[31merror\x1b[0m: disk\tfull\r\n")
    ingest(tmp_path, [d], "t")
    import tokenfeed
    tok = tokenfeed.Tokenizer.from_file(deepseek())
    texts = sorted(tok.decode(r["ids"]) for r in records(f"log:{tmp_path}/t"))
    assert "caf\ufffd cr\ufffdme br\ufffdl\ufffde" in texts and len(texts) == 3
    r = ingest(tmp_path, [d], "strict", "--utf8", "reject", "--rejects", tmp_path / "r.jsonl")
    reasons = [json.loads(line)["reason"] for line in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert reasons == ["invalid_utf8", "invalid_utf8"]


def summary_counts(stderr: str) -> tuple[int, int, int, int]:
    m = re.search(r"ingest: (\d+) documents read = (\d+) written \+ (\d+) already in the topic \+ (\d+) dropped",
                  stderr)
    assert m, stderr
    return tuple(int(g) for g in m.groups())


def test_a_trailing_double_star_is_every_file_below(tmp_path):
    d = tmp_path / "in"
    (d / "sub" / "deeper").mkdir(parents=True)
    write_jsonl(d / "a.jsonl", ["top level"])
    write_jsonl(d / "sub" / "b.jsonl", ["one down"])
    write_jsonl(d / "sub" / "deeper" / "c.jsonl", ["two down"])
    r = run("ingest", "--tokenizer", deepseek(), "--input", "in/**", "--to", f"log:{tmp_path}/t", "--progress",
            "never", cwd=tmp_path)
    assert summary_counts(r.stderr)[1] == 3
    assert sorted(os.path.basename(x["source"]["path"]) for x in records(f"log:{tmp_path}/t")) == \
        ["a.jsonl", "b.jsonl", "c.jsonl"]


def mixed_corpus(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    lines = [
        json.dumps({"text": "good one"}),
        "{not json",
        json.dumps({"other": "no text field"}),
        json.dumps({"text": "good two"}),
        json.dumps({"text": "good two"}),  # duplicate
        json.dumps({"text": "   "}),       # empty after trimming
        json.dumps({"text": "x"}),         # too short with --min-chars 3
        json.dumps({"text": "good three"}),
    ]
    (d / "mixed.jsonl").write_text("\n".join(lines) + "\n")
    return d


def test_the_summary_and_stats_add_up_by_reason(tmp_path):
    d = mixed_corpus(tmp_path)
    r = ingest(tmp_path, [d], "t", "--min-chars", "3", "--stats-json", tmp_path / "s.json")
    read, written, present, dropped = summary_counts(r.stderr)
    assert (read, written, present, dropped) == (8, 3, 0, 5)
    block = r.stderr.split("dropped by reason:\n", 1)[1].splitlines()
    names = [line.split()[0] for line in block if line.startswith("  ")]
    assert sorted(names) == ["bad_json", "duplicate", "empty", "missing_field", "too_short"], r.stderr
    raw = (tmp_path / "s.json").read_text()
    assert raw.endswith("}\n")
    s = json.loads(raw)
    assert s["documents_read"] == 8 and s["documents_written"] == 3 and s["documents_dropped"] == 5
    assert sum(s["dropped_by_reason"].values()) == s["documents_dropped"]
    assert s["complete"] is True
    # Run again: everything is already there, and it still adds up.
    r = ingest(tmp_path, [d], "t", "--min-chars", "3", "--stats-json", tmp_path / "s2.json")
    assert summary_counts(r.stderr) == (8, 0, 3, 5)
    s2 = json.loads((tmp_path / "s2.json").read_text())
    assert s2["documents_read"] == s2["documents_written"] + s2["documents_skipped_already_in_topic"] + \
        s2["documents_dropped"]


def test_rejects_and_strict_cover_cleaning_and_dedup_drops(tmp_path):
    d = mixed_corpus(tmp_path)
    ingest(tmp_path, [d], "t", "--min-chars", "3", "--rejects", tmp_path / "r.jsonl")
    rejects = [json.loads(l) for l in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert [(x["reason"], x["line"]) for x in rejects] == [
        ("bad_json", 2), ("missing_field", 3), ("duplicate", 5), ("empty", 6), ("too_short", 7)]
    assert all(x["message"] for x in rejects)
    # --strict stops at the first drop of any kind: here the duplicate on line 5.
    clean = tmp_path / "clean"
    clean.mkdir()
    write_jsonl(clean / "c.jsonl", ["first", "second", "first", "third"])
    r = ingest(tmp_path, [clean], "s", "--strict", "--stats-json", tmp_path / "strict.json", check=False)
    assert r.returncode == 3, r.stderr
    assert "c.jsonl:3" in r.stderr and "duplicate" in r.stderr
    # 17: the stats are written when --strict stops the run, and add up.
    s = json.loads((tmp_path / "strict.json").read_text())
    assert s["complete"] is False and "c.jsonl:3" in s["stopped_by_strict"]
    assert (s["documents_read"], s["documents_written"], s["documents_dropped"]) == (3, 2, 1)
    assert [x["doc_seq"] for x in records(f"log:{tmp_path}/s")] == [0, 1]


def test_resume_does_not_depend_on_the_working_directory(tmp_path, corpus):
    d, texts = corpus
    uri = f"log:{tmp_path}/t"
    one, two = tmp_path / "one", tmp_path / "two" / "deeper"
    one.mkdir()
    two.mkdir(parents=True)
    common = ["ingest", "--tokenizer", deepseek(), "--to", uri, "--progress", "never", "--partitions", "2",
              "--no-dedup"]
    r = subprocess.run([cli(), *common, "--input", os.path.relpath(d, one)], cwd=one, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([cli(), *common, "--input", os.path.relpath(d, two), "--stats-json", "s.json"], cwd=two,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    s = json.loads((two / "s.json").read_text())
    # Without dedup the reading starts at the partitions' last documents.
    assert s["documents_written"] == 0 and s["documents_skipped_already_in_topic"] >= 1
    assert len(records(uri)) == len(texts)


def test_resume_does_not_depend_on_how_the_inputs_are_spelled(tmp_path):
    """Inputs are read, and fingerprinted, in the order of their resolved paths: spelled so that they
    sort the other way round (an absolute path before a relative one), they are the same inputs."""
    m, z = tmp_path / "m", tmp_path / "z"
    m.mkdir()
    z.mkdir()
    texts = corpus_texts(400, seed=5)
    write_jsonl(m / "a.jsonl", texts[:200])
    write_jsonl(z / "b.jsonl", texts[200:])
    uri = f"log:{tmp_path}/t"
    common = ["ingest", "--tokenizer", deepseek(), "--to", uri, "--progress", "never", "--partitions", "2",
              "--no-dedup"]
    # From m: "/.../z/b.jsonl" sorts before "a.jsonl" as spelled; resolved, m/a.jsonl comes first.
    r = subprocess.run([cli(), *common, "--input", "a.jsonl", str(z / "b.jsonl")], cwd=m, capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    seqs = sorted((x["doc_seq"], x["source"]["path"]) for x in records(uri))
    assert [p for _, p in seqs] == [os.path.realpath(m / "a.jsonl")] * 200 + [os.path.realpath(z / "b.jsonl")] * 200
    # From tmp_path, both relative: "m/a.jsonl" sorts first as spelled too.
    r = subprocess.run([cli(), *common, "--input", "z/b.jsonl", "m/a.jsonl", "--stats-json", "s.json"],
                       cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    s = json.loads((tmp_path / "s.json").read_text())
    assert s["documents_written"] == 0 and s["documents_skipped_already_in_topic"] >= 1
    assert len(records(uri)) == len(texts)


def test_numbers_are_validated(tmp_path, corpus):
    d, _ = corpus
    ingest(tmp_path, [d], "t", "--partitions", "2")
    uri = f"log:{tmp_path}/t"
    for bad in (["--threads", "-3"], ["--partitions", "0"], ["--max-doc-bytes", "-1"], ["--batch-bytes", "0"]):
        r = ingest(tmp_path, [d], "other", *bad, check=False)
        assert r.returncode == 2 and bad[0] in r.stderr, (bad, r.returncode, r.stderr)
    r = run("inspect", uri, "--offset", "-1", check=False)
    assert r.returncode == 2 and "--offset" in r.stderr, r.stderr
    # Partition 0 holds 1500 records, partition 1 as many; add a third topic
    # with uneven partitions: an offset past one partition's end leaves it out.
    small = tmp_path / "small"
    small.mkdir()
    write_jsonl(small / "s.jsonl", [f"doc {i}" for i in range(5)])
    ingest(tmp_path, [small], "uneven", "--partitions", "2")  # 3 records in partition 0, 2 in partition 1
    out = [json.loads(l)
           for l in run("inspect", f"log:{tmp_path}/uneven", "--offset", "2", "--json").stdout.splitlines()]
    assert [(x["partition"], x["offset"]) for x in out] == [(0, 2)]
    r = run("inspect", f"log:{tmp_path}/uneven", "--offset", "9", check=False)
    assert r.returncode != 0 and "past it" in r.stderr


def test_exit_codes_and_a_bare_command(tmp_path, corpus):
    d, _ = corpus
    r = subprocess.run([cli()], capture_output=True, text=True)
    assert r.returncode == 0 and "ingest" in r.stdout and "Exit codes" in r.stdout
    assert run("--no-such-option", check=False).returncode == 2
    assert run("ingest", "--tokenizer", deepseek(), check=False).returncode == 2  # required options missing
    assert run("inspect", f"log:{tmp_path}/missing", check=False).returncode == 1
    assert run("topics", f"log:{tmp_path}/missing", check=False).returncode == 1
    assert run("--help", check=False).returncode == 0
    # 2: what the parser or the command's own checks of its arguments refuse, a number out of range for the
    # topic included.
    ingest(tmp_path, [d], "t", "--partitions", "4")
    uri = f"log:{tmp_path}/t"
    for args, says in [(["inspect", uri, "--partition", "9"], "there is no partition 9"),
                       (["inspect", uri, "--offset", "999999"], "is past it"),
                       (["inspect", uri, "--partition", "1", "--offset", "999999"], "is past it"),
                       (["inspect", uri, "--decode"], "--decode needs --tokenizer"),
                       (["inspect", "t"], "is not a topic URI"),
                       (["topics", "nowhere:t"], "is not a topic URI"),
                       (["ingest", "--tokenizer", deepseek(), "--input", d, "--to", "t"], "is not a topic URI"),
                       (["ingest", "--tokenizer", deepseek(), "--input", d, "--to", uri, "--shard", "4/2"],
                        "shard '4/2'")]:
        r = run(*args, check=False)
        assert r.returncode == 2 and says in r.stderr, (args, r.returncode, r.stderr)
    # 1: what the command meets while working, an invalid argument there included: a tokenizer file that does
    # not parse, a topic written with other settings.
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{not json")
    for args, says in [(["ingest", "--tokenizer", bad, "--input", d, "--to", f"log:{tmp_path}/new"], "JSON"),
                       (["inspect", uri, "--decode", "--tokenizer", bad], "JSON"),
                       (["ingest", "--tokenizer", deepseek(), "--input", d, "--to", uri, "--add-eos"],
                        "another ingest")]:
        r = run(*args, check=False)
        assert r.returncode == 1 and says in r.stderr, (args, r.returncode, r.stderr)


def test_inspect_escapes_control_characters_in_text(tmp_path):
    d = tmp_path / "in"
    d.mkdir()
    write_jsonl(d / "a.jsonl", ["red \x1b[31malert\x1b[0m and a bell \x07 then \u009b2J done"])
    ingest(tmp_path, [d], "t", "--keep-controls")
    out = run("inspect", f"log:{tmp_path}/t", "--decode", "--tokenizer", deepseek()).stdout
    assert "\x1b" not in out and "\x07" not in out and "\u009b" not in out
    assert r"\x1b[31malert\x1b[0m" in out and r"\x07" in out and r"\u009b2J" in out
    # --json escapes them as JSON does, and the text comes back exactly.
    raw = run("inspect", f"log:{tmp_path}/t", "--decode", "--tokenizer", deepseek(), "--json").stdout
    assert "\x1b" not in raw and "\x07" not in raw
    assert json.loads(raw)["text"] == "red \x1b[31malert\x1b[0m and a bell \x07 then \u009b2J done"


def test_what_recovery_repaired_is_reported_and_damage_is_the_users_choice(tmp_path, corpus):
    d, texts = corpus
    seg = tmp_path / "t" / "partition-00000" / "00000000000000000000.seg"
    ingest(tmp_path, [d / "a.jsonl"], "t", "--batch-bytes", "4096")
    # A torn tail: bytes after the last sync that form no batch. Before, the
    # writer cut them without a word.
    with open(seg, "ab") as f:
        f.write(b"\x07" * 37)
    r = ingest(tmp_path, [d / "a.jsonl"], "t", "--batch-bytes", "4096", "--stats-json", tmp_path / "s.json")
    assert re.search(r"recovered: log:\S+/t partition 0: cut 37 bytes off '\S+\.seg' at position \d+", r.stderr), \
        r.stderr
    stats = json.loads((tmp_path / "s.json").read_text())
    assert len(stats["recovered"]) == 1 and "cut 37 bytes" in stats["recovered"][0]
    again = ingest(tmp_path, [d / "a.jsonl"], "t", "--batch-bytes", "4096")
    assert "recovered:" not in again.stderr
    # Damage: a flipped bit in a synced batch is not a torn tail. The writer
    # refuses; asked to, it keeps the bytes aside and cuts them off, and the
    # resumed ingest writes the lost documents again.
    size = seg.stat().st_size
    raw = bytearray(seg.read_bytes())
    raw[size // 2] ^= 0x10
    seg.write_bytes(bytes(raw))
    refused = ingest(tmp_path, [d / "a.jsonl"], "t", "--batch-bytes", "4096", check=False)
    assert refused.returncode == 1, refused.stderr
    assert "Corruption" in refused.stderr and "discard" in refused.stderr, refused.stderr
    r = ingest(tmp_path, [d / "a.jsonl"], "t", "--batch-bytes", "4096", "--discard-after-damage")
    m = re.search(r"recovered: log:\S+/t partition 0: .*damage discarded on request, its bytes kept in '(\S+)'",
                  r.stderr)
    assert m, r.stderr
    kept = m.group(1)
    assert os.path.exists(kept) and ".damaged-" in kept
    recs = records(f"log:{tmp_path}/t")
    assert sorted(x["doc_seq"] for x in recs) == list(range(1500))


def test_a_rejects_file_that_cannot_be_written_fails_the_run(tmp_path):
    # Before, the writes to the rejects file were not checked: a full disk
    # lost the rejects without a word.
    d = tmp_path / "in"
    d.mkdir()
    (d / "a.jsonl").write_text('{"text": "kept"}\n{"other": 1}\n{"text": "also kept"}\n')
    r = ingest(tmp_path, [d], "t", "--rejects", "/dev/full", check=False)
    assert r.returncode == 1, r.stderr
    assert "cannot write the rejects file" in r.stderr and "/dev/full" in r.stderr, r.stderr
    # The documents were written; the run is reported as failed, not complete.
    assert len(records(f"log:{tmp_path}/t")) == 2
