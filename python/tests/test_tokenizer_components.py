"""Each tokenizer.json component tokenfeed implements, against the reference.

A base vocabulary (Llama-3's) is given different normalizers, pre-tokenizers,
added tokens and post-processors; for each variant, tokenfeed and the
reference must give the same ids on the same texts.
"""

from __future__ import annotations

import copy
import json

import pytest

import tokenfeed
from conftest import missing, tokenizer_path

TEXTS = [
    "Hello World, HELLO world! It's 2024: 12345 apples, 3.14 pies.",
    "  leading and trailing  ", "a\r\nb\n\nc\t d", "中文字符 と カタカナ 한국어", "Ünïcödé Å Å ﬁ ß İ",
    "mask <mask> here<mask>there < mask >", "say wor and world and wor!", "x<sep>y <sep> z",
    "e\u0301 n\u0303 \u00e9", "数字１２３ and ①②", "", " ", "🙂 emoji 👩\u200d👩\u200d👧",
]


@pytest.fixture(scope="module")
def base():
    path = tokenizer_path("llama3")
    if not path.exists():
        missing(f"tokenizer file {path} is missing")
    try:
        import tokenizers  # noqa: F401
    except ImportError:
        missing("the reference package 'tokenizers' is not installed")
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def check(spec: dict, texts=TEXTS, add_special_tokens=False):
    from tokenizers import Tokenizer

    data = json.dumps(spec)
    ref = Tokenizer.from_str(data)
    ours = tokenfeed.Tokenizer.from_str(data)
    for t in texts:
        want = ref.encode(t, add_special_tokens=add_special_tokens).ids
        assert ours.encode(t, add_special_tokens=add_special_tokens) == want, (t, spec["pre_tokenizer"])


def with_pre(base, *steps):
    spec = copy.deepcopy(base)
    spec["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": list(steps)}
    return spec


BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}


@pytest.mark.parametrize("behavior", ["Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"])
@pytest.mark.parametrize("invert", [False, True])
@pytest.mark.parametrize("pattern", [{"Regex": "\\s+"}, {"Regex": "\\p{N}"}, {"Regex": "[aeiou]+"},
                                     {"String": " "}, {"String": "wor"}])
def test_split_behaviors(base, behavior, invert, pattern):
    split = {"type": "Split", "pattern": pattern, "behavior": behavior, "invert": invert}
    check(with_pre(base, split, BYTE_LEVEL))


@pytest.mark.parametrize("individual", [False, True])
def test_digits(base, individual):
    check(with_pre(base, {"type": "Digits", "individual_digits": individual}, BYTE_LEVEL))


@pytest.mark.parametrize("prefix", [False, True])
@pytest.mark.parametrize("use_regex", [False, True])
def test_byte_level_options(base, prefix, use_regex):
    step = dict(BYTE_LEVEL, add_prefix_space=prefix, use_regex=use_regex)
    check(with_pre(base, step))
    spec = copy.deepcopy(base)
    spec["pre_tokenizer"] = step  # not inside a Sequence
    check(spec)


@pytest.mark.parametrize("normalizer", [
    {"type": "NFC"}, {"type": "NFD"}, {"type": "NFKC"}, {"type": "NFKD"}, {"type": "Lowercase"},
    {"type": "Strip", "strip_left": True, "strip_right": True},
    {"type": "Strip", "strip_left": False, "strip_right": True},
    {"type": "Prepend", "prepend": "▁"},
    {"type": "Replace", "pattern": {"String": " "}, "content": "_"},
    {"type": "Replace", "pattern": {"Regex": "\\d+"}, "content": "#"},
    {"type": "Sequence", "normalizers": [{"type": "NFKC"}, {"type": "Lowercase"}]},
])
def test_normalizers(base, normalizer):
    spec = copy.deepcopy(base)
    spec["normalizer"] = normalizer
    check(spec)


def test_added_token_options(base):
    spec = copy.deepcopy(base)
    spec["normalizer"] = {"type": "Lowercase"}
    next_id = max(t["id"] for t in spec["added_tokens"]) + 1
    extra = [
        dict(content="<mask>", lstrip=True, rstrip=False, single_word=False, normalized=False, special=True),
        dict(content="<sep>", lstrip=True, rstrip=True, single_word=False, normalized=False, special=False),
        dict(content="wor", lstrip=False, rstrip=False, single_word=True, normalized=False, special=False),
        dict(content="HELLO", lstrip=False, rstrip=False, single_word=False, normalized=True, special=False),
    ]
    for i, t in enumerate(extra):
        spec["added_tokens"].append(dict(t, id=next_id + i))
    check(spec)


def test_template_processing(base):
    spec = copy.deepcopy(base)
    spec["post_processor"] = {
        "type": "TemplateProcessing",
        "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}},
                   {"Sequence": {"id": "A", "type_id": 0}},
                   {"SpecialToken": {"id": "<|end_of_text|>", "type_id": 0}}],
        "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {
            "<|begin_of_text|>": {"id": "<|begin_of_text|>", "ids": [128000], "tokens": ["<|begin_of_text|>"]},
            "<|end_of_text|>": {"id": "<|end_of_text|>", "ids": [128001], "tokens": ["<|end_of_text|>"]},
        },
    }
    check(spec, add_special_tokens=True)
    ours = tokenfeed.Tokenizer.from_str(json.dumps(spec))
    assert ours.bos_id == 128000 and ours.eos_id == 128001


@pytest.mark.parametrize("section,value,message", [
    ("model", {"type": "Unigram", "vocab": []}, "model.type: Unigram is not supported"),
    ("pre_tokenizer", {"type": "BertPreTokenizer"}, "pre_tokenizer.type: BertPreTokenizer"),
    ("pre_tokenizer", {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "sometimes"},
     "pre_tokenizer.prepend_scheme: 'sometimes' is not always, first or never"),
    ("pre_tokenizer", {"type": "Metaspace", "replacement": "▁", "add_prefix_space": False},
     "pre_tokenizer.add_prefix_space: false contradicts prepend_scheme"),
    ("pre_tokenizer", {"type": "Sequence", "pretokenizers": [{"type": "Whitespace"}, BYTE_LEVEL]},
     "pre_tokenizer.pretokenizers[0].type: Whitespace"),
    ("pre_tokenizer", {"type": "Sequence", "pretokenizers": [BYTE_LEVEL, {"type": "Digits"}]},
     "ByteLevel must be the last pre-tokenizer step"),
    ("normalizer", {"type": "BertNormalizer"}, "normalizer.type: BertNormalizer"),
    ("normalizer", {"type": "Sequence", "normalizers": [{"type": "Precompiled"}]},
     "normalizer.normalizers[0].type: Precompiled"),
    ("post_processor", {"type": "Fancy"}, "post_processor.type: Fancy"),
])
def test_unsupported_components_are_named(base, section, value, message):
    spec = copy.deepcopy(base)
    spec[section] = value
    with pytest.raises((NotImplementedError, ValueError), match=message.replace("[", "\\[").replace("]", "\\]")):
        tokenfeed.Tokenizer.from_str(json.dumps(spec))


def test_bad_values_are_named(base):
    spec = copy.deepcopy(base)
    spec["model"]["merges"][5] = "Ġt"  # one token, no space
    with pytest.raises(ValueError, match="model.merges\\[5\\]"):
        tokenfeed.Tokenizer.from_str(json.dumps(spec))
    spec = copy.deepcopy(base)
    spec["pre_tokenizer"] = with_pre(base, {"type": "Split", "pattern": {"Regex": "(unclosed"},
                                            "behavior": "Isolated", "invert": False}, BYTE_LEVEL)["pre_tokenizer"]
    with pytest.raises(ValueError, match="does not compile"):
        tokenfeed.Tokenizer.from_str(json.dumps(spec))
    spec = copy.deepcopy(base)
    spec["model"]["dropout"] = 0.1
    with pytest.raises(NotImplementedError, match="dropout"):
        tokenfeed.Tokenizer.from_str(json.dumps(spec))


def test_post_processor_ids_must_be_tokens(base):
    # An id the tokenizer does not have would come out of every encode with
    # special tokens: a load-time error naming it (found by fuzzing the loader).
    spec = copy.deepcopy(base)
    spec["post_processor"] = {"type": "TemplateProcessing",
                              "single": [{"SpecialToken": {"id": "<x>", "type_id": 0}},
                                         {"Sequence": {"id": "A", "type_id": 0}}],
                              "pair": [{"Sequence": {"id": "A", "type_id": 0}}],
                              "special_tokens": {"<x>": {"id": "<x>", "ids": [1999999], "tokens": ["<x>"]}}}
    with pytest.raises(ValueError, match="post_processor: adds token id 1999999"):
        tokenfeed.Tokenizer.from_str(json.dumps(spec))
    spec["post_processor"] = {"type": "RobertaProcessing", "sep": ["</s>", 2**32 + 1], "cls": ["<s>", 0],
                              "trim_offsets": True, "add_prefix_space": False}
    with pytest.raises(ValueError, match="cls and sep ids must be token ids"):
        tokenfeed.Tokenizer.from_str(json.dumps(spec))
