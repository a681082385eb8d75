"""Tokenizers whose Split pattern has no hand-written scanner (GPT-4o with
`invert`, gpt-oss): the general Oniguruma path against the reference, and
how a failed regex search is reported."""

from __future__ import annotations

import json
import random

import pytest

import tokenfeed
from conftest import missing, tokenizer_path
from test_tokenizer_parity import TARGETED

REGEX_VOCABULARIES = ["gpt4o", "gpt_oss"]


@pytest.fixture(scope="module", params=REGEX_VOCABULARIES)
def pair(request):
    path = tokenizer_path(request.param)
    if not path.exists():
        missing(f"tokenizer file {path} is missing")
    try:
        from tokenizers import Tokenizer
    except ImportError:
        missing("the reference package 'tokenizers' is not installed")
    ref = Tokenizer.from_file(str(path))
    ref.no_truncation()
    ref.no_padding()
    return tokenfeed.Tokenizer.from_file(str(path)), ref


def sample(documents, n=600, seed=5):
    _, docs = documents
    rng = random.Random(seed)
    picked = rng.sample(docs, min(n, len(docs)))
    return [d[:4000] for d in picked]


def test_targeted_cases_match_reference(pair):
    ours, ref = pair
    bad = [t for t in TARGETED if ours.encode(t) != ref.encode(t, add_special_tokens=False).ids]
    assert not bad, bad[:5]


def test_documents_match_reference_one_by_one_and_in_batches(pair, documents):
    ours, ref = pair
    docs = sample(documents)
    want = [e.ids for e in ref.encode_batch(docs, add_special_tokens=False)]
    assert ours.encode_batch(docs) == want
    assert [ours.encode(d) for d in docs[:100]] == want[:100]


def byte_level_alphabet() -> list[str]:
    """The 256 characters GPT-2's ByteLevel maps bytes to, in byte order."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars, extra = {}, 0
    for b in range(256):
        if b in printable:
            chars[b] = chr(b)
        else:
            chars[b] = chr(256 + extra)
            extra += 1
    return [chars[b] for b in range(256)]


# A byte-level vocabulary of the 256 single bytes and no merges: enough to run
# any pre-tokenizer pattern through the whole pipeline.
def tiny_tokenizer(pattern: str) -> dict:
    vocab = {ch: i for i, ch in enumerate(byte_level_alphabet())}
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]},
        "post_processor": None, "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                                            "use_regex": True},
        "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": vocab, "merges": []},
    }


BACKTRACKING = r"(?:\s*\s*[\r\n]|\s+)"  # about n*n/2 backtracks on n spaces without a line break


def test_a_failed_search_is_a_clear_error_for_that_text_only():
    tok = tokenfeed.Tokenizer.from_str(json.dumps(tiny_tokenizer(BACKTRACKING)))
    assert tok.encode("  x") == tok.encode_batch(["  x"])[0]
    with pytest.raises(ValueError) as e:
        tok.encode(" " * 6000 + "b")
    message = str(e.value)
    assert "pre_tokenizer.pretokenizers[0].pattern.Regex" in message, message
    assert "retry-limit-in-match over" in message, message
    assert "bad_alloc" not in message
    # The tokenizer goes on working after the failure.
    assert len(tok.encode("  y")) == 3


def test_a_failed_search_in_encode_batch_raises_and_names_the_text():
    tok = tokenfeed.Tokenizer.from_str(json.dumps(tiny_tokenizer(BACKTRACKING)))
    texts = ["fine text"] * 300 + [" " * 6000 + "b"] + ["more fine text"] * 300
    with pytest.raises(ValueError) as e:
        tok.encode_batch(texts)
    assert "text 300" in str(e.value), str(e.value)
    assert "retry-limit-in-match over" in str(e.value)
    assert len(tok.encode_batch(texts[:300])) == 300


def test_the_cli_names_the_line_whose_search_failed(tmp_path):
    from cli_helpers import run

    tok = tmp_path / "tokenizer.json"
    tok.write_text(json.dumps(tiny_tokenizer(BACKTRACKING)))
    corpus = tmp_path / "c.jsonl"
    lines = ([{"text": f"fine {i}"} for i in range(40)] + [{"text": "x" + " " * 6000 + "b"}]
             + [{"text": f"after {i}"} for i in range(40)])
    corpus.write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = run("tokenize", "--tokenizer", tok, "--threads", "2", corpus, check=False)
    assert r.returncode != 0
    assert f"{corpus}:41:" in r.stderr, r.stderr
    assert "retry-limit-in-match over" in r.stderr, r.stderr
    assert "terminate" not in r.stderr
    # The ingest stops at that document, naming it; nothing after it is
    # presented as written.
    ingest = run("ingest", "--tokenizer", tok, "--input", corpus, "--to", f"log:{tmp_path}/topics/t", "--threads", "2",
                 check=False)
    assert ingest.returncode != 0
    assert f"{corpus}:41: the document cannot be tokenized" in ingest.stderr, ingest.stderr
    assert "retry-limit-in-match over" in ingest.stderr, ingest.stderr
    assert "terminate" not in ingest.stderr
