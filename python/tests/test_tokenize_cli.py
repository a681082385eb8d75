"""tokenfeed tokenize: JSONL in (plain, .gz, .zst), one JSON array of ids per non-blank line out."""

from __future__ import annotations

import json
import shutil
import subprocess

from cli_helpers import deepseek, run
from conftest import missing

import tokenfeed


def test_one_array_per_line_in_order(tmp_path):
    texts = [f"document {i} 数据 {'x' * (i % 50)}" for i in range(3000)]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"meta": {"body": t}}, ensure_ascii=False) + "\n" for t in texts))
    out = run("tokenize", "--tokenizer", deepseek(), "--field", "meta.body", "--threads", "2", src).stdout
    got = [json.loads(line) for line in out.splitlines()]
    tok = tokenfeed.Tokenizer.from_file(deepseek())
    assert got == tok.encode_batch(texts)


def test_standard_input_crlf_and_bom(tmp_path):
    data = "\ufeff" + json.dumps({"text": "a"}) + "\r\n" + json.dumps({"text": "b c"}) + "\r\n"
    r = run("tokenize", "--tokenizer", deepseek(), input=data)
    tok = tokenfeed.Tokenizer.from_file(deepseek())
    assert [json.loads(l) for l in r.stdout.splitlines()] == [tok.encode("a"), tok.encode("b c")]


def test_a_bad_line_is_named_and_fails_the_run(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"text": "ok"}) + "\n" + "{broken\n" + json.dumps({"text": "later"}) + "\n")
    r = run("tokenize", "--tokenizer", deepseek(), src, check=False)
    assert r.returncode != 0 and f"{src}:2" in r.stderr and "not valid JSON" in r.stderr
    assert len(r.stdout.splitlines()) == 1  # the lines before it, nothing after
    src.write_text(json.dumps({"text": 5}) + "\n")
    r = run("tokenize", "--tokenizer", deepseek(), src, check=False)
    assert r.returncode != 0 and ":1" in r.stderr and "not a string" in r.stderr
    src.write_bytes(b'{"text": "bad \xff byte"}\n')
    r = run("tokenize", "--tokenizer", deepseek(), "--utf8", "reject", src, check=False)
    assert r.returncode != 0 and "byte offset" in r.stderr
    r = run("tokenize", "--tokenizer", deepseek(), src)  # replace by default
    assert len(r.stdout.splitlines()) == 1


def test_blank_lines_are_skipped_and_compressed_inputs_read(tmp_path):
    import gzip
    lines = [json.dumps({"text": f"line {i} 数据"}) for i in range(50)]
    plain = tmp_path / "plain.jsonl"
    plain.write_text("\n".join(lines) + "\n")
    expected = run("tokenize", "--tokenizer", deepseek(), plain).stdout
    assert len(expected.splitlines()) == 50
    spaced = tmp_path / "spaced.jsonl"
    spaced.write_text("\n" + "\n  \n".join(lines) + "\n\t\r\n\n")  # blank lines, as ingest skips them
    assert run("tokenize", "--tokenizer", deepseek(), spaced).stdout == expected
    gz = tmp_path / "in.jsonl.gz"
    gz.write_bytes(gzip.compress(plain.read_bytes()))
    assert run("tokenize", "--tokenizer", deepseek(), gz).stdout == expected
    if shutil.which("zstd") is None:
        missing("the zstd program is needed to write a .zst input")
    zst = tmp_path / "in.jsonl.zst"
    subprocess.run(["zstd", "-q", "-o", str(zst), str(plain)], check=True)
    assert run("tokenize", "--tokenizer", deepseek(), zst).stdout == expected
    r = run("tokenize", "--tokenizer", deepseek(), "--threads", "-3", plain, check=False)
    assert r.returncode == 2 and "--threads" in r.stderr


def test_a_line_longer_than_a_read_block_is_tokenized(tmp_path):
    # Lines are read in blocks of 8 MB. Before, a line longer than a block
    # sent the reader into endless recursion (the process died).
    words = "alpha beta 数据 管道 " * 500_000  # ~9.5 MB
    f = tmp_path / "long.jsonl"
    f.write_text(json.dumps({"text": "first"}) + "\n" + json.dumps({"text": words}, ensure_ascii=False) + "\n"
                 + json.dumps({"text": "last"}) + "\n")
    r = run("tokenize", "--tokenizer", deepseek(), f)
    out = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(out) == 3
    tok = tokenfeed.Tokenizer.from_file(deepseek())
    assert out[0] == tok.encode("first") and out[2] == tok.encode("last")
    assert tok.decode(out[1]) == words


def test_a_line_over_the_document_limit_is_an_error_naming_it(tmp_path):
    f = tmp_path / "huge.jsonl"
    with open(f, "w") as out:
        out.write('{"text": "ok"}\n{"text": "')
        out.write("x" * (65 << 20))
        out.write('"}\n')
    r = run("tokenize", "--tokenizer", deepseek(), f, check=False)
    assert r.returncode == 1, r.stderr
    assert f"{f}:2: the line is" in r.stderr and "more than the 67108864" in r.stderr, r.stderr
