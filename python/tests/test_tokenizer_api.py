"""The Python API of tokenfeed.Tokenizer: errors, numpy output, batching."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

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


def test_encode_numpy_gives_a_fresh_writable_array_of_each_texts_ids(ours):
    # Short and long texts (a long one is encoded without the GIL), the
    # empty text, and bytes: each its own array, equal to encode()'s ids.
    texts = ["hello world", "", "中文 text 123", "x" * 20000 + " end", b"caf\xc3\xa9"]
    arrays = [ours.encode_numpy(t) for t in texts]
    for t, arr in zip(texts, arrays):
        assert isinstance(arr, np.ndarray) and arr.dtype == np.uint32 and arr.ndim == 1
        assert arr.flags.writeable and arr.flags.owndata and arr.flags.c_contiguous
        assert arr.tolist() == ours.encode(t)
    assert arrays[1].shape == (0,)
    plain = [np.empty(2, dtype=np.uint32)]
    assert sys.getrefcount(arrays[0]) == sys.getrefcount(plain[0])  # no reference leaked
    # A text of more ids than are copied: the native buffer is handed over.
    many = "a b " * 40000
    big = ours.encode_numpy(many)
    assert big.dtype == np.uint32 and big.ndim == 1 and big.flags.writeable and big.flags.c_contiguous
    assert len(big) > 65536 and big.tolist() == ours.encode(many)
    first = ours.encode_numpy(texts[0])
    again = ours.encode_numpy(texts[0])
    first[0] = 7  # the arrays share nothing
    assert again.tolist() == ours.encode(texts[0])
    with pytest.raises(ValueError, match="byte offset 3"):
        ours.encode_numpy(b"abc\xff", utf8="reject")
    with pytest.raises(TypeError):
        ours.encode_numpy(12)


def test_encode_numpy_imports_numpy_once_from_many_threads(tokenizer_file):
    # In a fresh process, where tokenfeed has not imported numpy: threads
    # that make their first encode_numpy call together all get right arrays,
    # and numpy.empty's dtype gains no references call after call.
    code = f"""
import sys, threading
import tokenfeed
assert "numpy" not in sys.modules
t = tokenfeed.Tokenizer.from_file({str(tokenizer_file)!r})
want = t.encode("hello world 123")
barrier = threading.Barrier(8)
got = []
def run():
    barrier.wait()
    got.append(t.encode_numpy("hello world 123").tolist())
threads = [threading.Thread(target=run) for _ in range(8)]
for th in threads: th.start()
for th in threads: th.join()
assert got == [want] * 8, got
import numpy as np
dtype = np.dtype("uint32")
before = sys.getrefcount(dtype)
for _ in range(1000): t.encode_numpy("hello world")
assert abs(sys.getrefcount(dtype) - before) <= 1, (before, sys.getrefcount(dtype))
print("ok")
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def test_reject_policy_names_the_offset(ours):
    with pytest.raises(ValueError, match="byte offset 3"):
        ours.encode(b"abc\xff", utf8="reject")
    with pytest.raises(ValueError, match="text 1.*byte offset 0"):
        ours.encode_batch([b"fine", b"\x80bad"], utf8="reject")
    for call in (lambda: ours.encode("x", utf8="nonsense"), lambda: ours.encode_batch(["x"], utf8="nonsense")):
        with pytest.raises(tokenfeed.InvalidArgumentError, match="replace.*reject.*not 'nonsense'") as e:
            call()
        assert isinstance(e.value, ValueError)


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


def test_batch_of_items_the_sequence_does_not_own(ours):
    """A numpy str array or a sequence making a new str per item: every text is its own."""
    texts = [f"text number {i} " * (i % 5 + 1) for i in range(64)]

    class Fresh:
        def __len__(self):
            return len(texts)

        def __getitem__(self, i):
            if i >= len(texts):
                raise IndexError(i)
            return "".join(list(texts[i]))  # a new object each time

    want = [ours.encode(t) for t in texts]
    assert ours.encode_batch(Fresh()) == want
    assert ours.encode_batch(np.array(texts)) == want
    flat, offsets = ours.encode_batch_numpy(np.array(texts))
    assert [flat[offsets[i]:offsets[i + 1]].tolist() for i in range(64)] == want


def test_bad_arguments_are_clear_errors(ours):
    with pytest.raises(TypeError, match="not one text"):
        ours.encode_batch("hello")
    with pytest.raises(TypeError, match="not one text"):
        ours.encode_batch_numpy(b"hello")
    for bad in (-1, 5000):
        with pytest.raises(ValueError, match="num_threads"):
            ours.encode_batch(["a"], num_threads=bad)
    with pytest.raises(tokenfeed.InvalidArgumentError, match=r"ids\[1\] must be an integer between 0"):
        ours.decode([1, -1])
    with pytest.raises(ValueError, match="id must be an integer between 0"):
        ours.id_to_token(-1)
    assert ours.decode(np.array([ours.encode("hi")[0]], dtype=np.int64)) == ours.decode(ours.encode("hi")[:1])
    assert ours.id_to_token(np.int32(ours.eos_id)) == ours.id_to_token(ours.eos_id)
    with pytest.raises(TypeError, match="not bool"):
        ours.id_to_token(True)


def test_the_word_cache_bound_changes_no_id(documents):
    """A cache of one word (emptied at every new word), of 64 and the default give the same ids."""
    from conftest import missing, tokenizer_path

    path = str(tokenizer_path("deepseek_v3"))
    if not pathlib.Path(path).exists():
        missing(f"tokenizer file {path} is missing")
    texts = documents[1][:3000]
    default = tokenfeed.Tokenizer.from_file(path)
    for entries in (1, 64):
        small = tokenfeed.Tokenizer.from_file(path, word_cache_entries=entries)
        assert [small.encode(t) for t in texts] == [default.encode(t) for t in texts]
    for bad in (0, 2**26 + 1):
        with pytest.raises(tokenfeed.InvalidArgumentError, match=f"word_cache_entries must be 1 to 67108864, got {bad}"):
            tokenfeed.Tokenizer.from_file(path, word_cache_entries=bad)
