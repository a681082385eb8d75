"""tokenfeed's tokenizer against the reference (HF tokenizers), id for id."""

from __future__ import annotations

import random

import pytest

# Targeted cases: whitespace classes and line breaks, the \s+(?!\S) boundary,
# digit grouping, CJK and kana runs, combining marks, emoji sequences, ASCII
# symbols, special-token text inside documents.
TARGETED = [
    "", " ", "  ", "\t", "\n", "\r\n", "\r\n\r\n", "a\r\nb", "a\n\n\nb", "a \n b", "x  \n\n  y",
    "hello   world", "hello \u00a0world", "a\u0085b", "a\u2028b", "a\u2029b", "x\u3000y", "\u3000\u3000",
    "tail spaces   ", "   leading", " \t \n mixed \r\n\t", "a\u00a0\u00a0b", "\u200b\u200c\u200d",
    "1", "12", "123", "1234", "1234567", "12,345.678", "3.14159", "v1.2.3", "0x1F", "١٢٣٤٥", "१२३४",
    "²³", "Ⅻ", "½", "中文字符串测试", "漢字とひらがなとカタカナ", "カタカナー", "ｶﾀｶﾅ", "한국어 문장입니다.",
    "e\u0301", "n\u0303", "\u0915\u094d\u0937", "\u0627\u0644\u0639\u0631\u0628\u064a\u0629", "ὀδύσσεια",
    "👩\u200d👩\u200d👧", "👍🏽", "🇺🇳", "❤️", "~", "~~~", " ~", "a~b", " .com", ".com", "www.example.com",
    "it's", "IT'S", "we'll", "they're", "I'd", "'s", "ſ'ſ", "'S'T'RE", "don't stop", "<b>bold</b>",
    "<|endoftext|>", "a<|endoftext|>b", "<｜begin▁of▁sentence｜>hi", "x <|begin_of_text|> y",
    "<|im_start|>user\nhi<|im_end|>", "<think>reason</think>", "<｜User｜>q<｜Assistant｜>a",
    "def f(x):\n    return x  # c\n", "if (a && b) { c(); }\n\t\treturn;", "$$\\int_0^1 x^2 dx$$",
    "!!!???...", "--- ***", "\"quoted\"", "«guillemets»", "¡Hola!", "¿Qué?", "ab\u0000cd", "\x7f\x01",
    "Ǆǅǆ", "İstanbul", "ß ẞ", "ﬁ ﬂ", "Å Å", "\ufeffBOM",
    # SentencePiece-style vocabularies: the ▁ replacement in the text itself,
    # byte fallback (rare CJK, emoji, control and private-use characters),
    # their special tokens inside text, decomposed and composed forms.
    "▁", "▁▁x", " ▁ ", "a▁b c", "𠀋𠀌𪚥", "\U0001fae0\U0001f9cc", "\x00\x01\x1b[0m", "\ue000\uf8ff", "\ufffd",
    "<s>hi</s>", " <s> ", "<bos>text<eos>", "<start_of_turn>user\nhi<end_of_turn>", "[multimodal]", "<unused0>x",
    "<mask> <pad>", "Cafe\u0301 Café", "\u1100\u1161\u11a8 각", "ﬀ ﬃ", "x" * 3000, "中" * 2000, "\n" * 300,
]


def test_targeted_cases_match_reference(ours, reference):
    mismatches = []
    for text in TARGETED:
        want = reference.encode(text, add_special_tokens=False).ids
        got = ours.encode(text)
        if got != want:
            mismatches.append((text, want, got))
    assert not mismatches, mismatches[:5]


@pytest.mark.parametrize("ch", ["a", " ", "中", "1", "\n", "!", " \t", "ab ", "😀", "ab"])
def test_megabyte_runs_match_reference(ours, reference, ch):
    text = ch * (1_000_000 // len(ch.encode()))
    assert ours.encode(text) == reference.encode(text, add_special_tokens=False).ids


def test_corpus_matches_reference(ours, reference, documents):
    origin, docs = documents
    assert len(docs) > 100, f"too little text from {origin}"
    got = ours.encode_batch(docs)
    want = [e.ids for e in reference.encode_batch(docs, add_special_tokens=False)]
    bad = [i for i, (g, w) in enumerate(zip(got, want)) if g != w]
    assert len(got) == len(want) == len(docs)
    assert not bad, f"{len(bad)} of {len(docs)} documents from {origin} differ; first: {docs[bad[0]][:200]!r}"


def test_random_mixtures_match_reference(ours, reference, documents):
    """Splices of real text from different scripts, with random cut points."""
    _, docs = documents
    rng = random.Random(1234)
    pieces = []
    for _ in range(3000):
        parts = []
        for _ in range(rng.randint(1, 4)):
            d = rng.choice(docs)
            if not d:
                continue
            a = rng.randrange(len(d))
            parts.append(d[a:a + rng.randint(1, 80)])
        pieces.append(rng.choice(["", " ", "\n", "  ", "\u3000"]).join(parts))
    got = ours.encode_batch(pieces)
    want = [e.ids for e in reference.encode_batch(pieces, add_special_tokens=False)]
    bad = [p for p, g, w in zip(pieces, got, want) if g != w]
    assert not bad, f"{len(bad)} of {len(pieces)} differ; first: {bad[0]!r}"


def test_special_tokens_added_like_reference(ours, reference):
    for text in ["hello", "", "中文"]:
        assert ours.encode(text, add_special_tokens=True) == reference.encode(text).ids


def test_decode_matches_reference(ours, reference, documents):
    _, docs = documents
    sample = docs[:: max(1, len(docs) // 500)]
    for text in sample + TARGETED:
        ids = reference.encode(text, add_special_tokens=False).ids
        assert ours.decode(ids) == reference.decode(ids, skip_special_tokens=False)
        assert ours.decode(ids, skip_special_tokens=True) == reference.decode(ids, skip_special_tokens=True)


def test_decode_inverts_encode(ours, reference, documents):
    """decode(encode(text)) is the text, except where the reference's own round
    trip changes it: SentencePiece-style decoders turn a literal ▁ into a space."""
    _, docs = documents
    for text in docs[:: max(1, len(docs) // 300)]:
        got = ours.decode(ours.encode(text))
        if "\u2581" in text:
            ids = reference.encode(text, add_special_tokens=False).ids
            assert got == reference.decode(ids, skip_special_tokens=False)
        else:
            assert got == text


def test_invalid_utf8_is_replaced_like_python(ours, reference):
    for raw in [b"abc\xffdef", b"\xe2\x82", b"\xf0\x80\x80 x", b"\xed\xa0\x80", b"ok \xc0\xaf ok"]:
        text = raw.decode("utf-8", errors="replace")
        assert ours.encode(raw) == reference.encode(text, add_special_tokens=False).ids
