"""The Python API of tokenfeed.Tokenizer: errors, numpy output, batching."""

from __future__ import annotations

import json

import numpy as np
import pytest

import tokenfeed


def test_encode_numpy_and_batch_agree(ours):
    texts = ["hello world", "中文 text", "", "a" * 1000]
    single = [ours.encode(t) for t in texts]
    assert ours.encode_batch(texts) == single
    assert ours.encode_batch(texts, num_threads=1) == single
    arr = ours.encode_numpy(texts[0])
    assert arr.dtype == np.uint32 and arr.tolist() == single[0]
    flat, offsets = ours.encode_batch_numpy(texts)
    assert offsets.dtype == np.int64 and len(offsets) == len(texts) + 1
    for i, ids in enumerate(single):
        assert flat[offsets[i]:offsets[i + 1]].tolist() == ids


def test_reject_policy_names_the_offset(ours):
    with pytest.raises(ValueError, match="byte offset 3"):
        ours.encode(b"abc\xff", utf8="reject")
    with pytest.raises(ValueError, match="text 1.*byte offset 0"):
        ours.encode_batch([b"fine", b"\x80bad"], utf8="reject")
    with pytest.raises(ValueError, match="replace.*reject"):
        ours.encode("x", utf8="nonsense")


def test_split_special_tokens_treats_them_as_text(ours):
    eos = ours.eos_id
    assert eos is not None
    content = ours.id_to_token(eos)
    assert ours.encode(content) == [eos]
    assert eos not in ours.encode(content, split_special_tokens=True)
    assert ours.decode(ours.encode(content, split_special_tokens=True)) == content


def test_decode_rejects_unknown_ids(ours):
    with pytest.raises(ValueError, match="not in the vocabulary"):
        ours.decode([ours.vocab_size + 10])


def test_missing_file_and_unsupported_model(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.json"):
        tokenfeed.Tokenizer.from_file(str(tmp_path / "nope.json"))
    wordpiece = {"model": {"type": "WordPiece", "vocab": {"a": 0}}, "pre_tokenizer": None}
    with pytest.raises(NotImplementedError, match="model.type: WordPiece"):
        tokenfeed.Tokenizer.from_str(json.dumps(wordpiece))
    with pytest.raises(ValueError, match="not valid JSON"):
        tokenfeed.Tokenizer.from_str("{not json")
