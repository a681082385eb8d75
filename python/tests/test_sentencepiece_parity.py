"""SentencePiece-style BPE variants the shipped files do not exercise: the
Metaspace pre-tokenizer and decoder (each prepend scheme, with and without
split) on Llama-2's vocabulary, against the reference, id for id and text
for text."""

from __future__ import annotations

import json
import random

import pytest

import tokenfeed
from conftest import missing, tokenizer_path
from test_tokenizer_parity import TARGETED

VARIANTS = [("always", True), ("first", True), ("never", True), ("always", False), ("first", False)]


@pytest.fixture(scope="module", params=VARIANTS, ids=lambda v: f"{v[0]}-{'split' if v[1] else 'whole'}")
def pair(request):
    path = tokenizer_path("llama2")
    if not path.exists():
        missing(f"tokenizer file {path} is missing")
    try:
        from tokenizers import Tokenizer
    except ImportError:
        missing("the reference package 'tokenizers' is not installed")
    scheme, split = request.param
    spec = json.loads(path.read_text(encoding="utf-8"))
    spec["normalizer"] = None
    spec["pre_tokenizer"] = {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": scheme, "split": split}
    spec["decoder"] = {"type": "Sequence", "decoders": [
        {"type": "ByteFallback"},
        {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": scheme, "split": split},
    ]}
    text = json.dumps(spec)
    ref = Tokenizer.from_str(text)
    ref.no_truncation()
    ref.no_padding()
    return tokenfeed.Tokenizer.from_str(text), ref


def test_targeted_cases_match_reference(pair):
    ours, ref = pair
    for text in TARGETED + ["<s> a</s>b", " </s> x", "x </s>  y"]:
        want = ref.encode(text, add_special_tokens=False).ids
        assert ours.encode(text) == want, text
        assert ours.decode(want) == ref.decode(want, skip_special_tokens=False), text


def test_documents_match_reference(pair, documents):
    ours, ref = pair
    _, docs = documents
    rng = random.Random(3)
    picked = [d[:3000] for d in rng.sample(docs, min(400, len(docs)))]
    want = [e.ids for e in ref.encode_batch(picked, add_special_tokens=False)]
    assert ours.encode_batch(picked) == want
    for ids in want[:100]:
        assert ours.decode(ids) == ref.decode(ids, skip_special_tokens=False)
