"""tokenfeed tokenize: JSONL in, one JSON array of ids per line out."""

from __future__ import annotations

import json

from cli_helpers import deepseek, run

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
