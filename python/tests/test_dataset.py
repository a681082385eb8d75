"""tokenfeed.TokenDataset: the PyTorch side of the loader."""

from __future__ import annotations

import json

import pytest
import torch
from torch.utils.data import DataLoader

import tokenfeed
from dataset_helpers import make_topic


@pytest.fixture(scope="module")
def topic(tmp_path_factory):
    return make_topic(tmp_path_factory.mktemp("ds"), "t")


def rows(ds, limit=None):
    out = []
    for i, b in enumerate(ds):
        if limit is not None and i >= limit:
            break
        out.extend(b["input_ids"].tolist())
    return out


def test_batches_are_tensors_of_the_right_shape(topic):
    ds = tokenfeed.TokenDataset(topic, seq_len=128, batch_size=4, seed=3)
    b = next(iter(ds))
    assert b["input_ids"].shape == (4, 128) and b["input_ids"].dtype == torch.int64
    assert b["labels"].shape == b["position_ids"].shape == b["document_ids"].shape == (4, 128)
    assert b["cu_seqlens"][0] == 0 and b["cu_seqlens"][-1] == 4 * 128
    # labels are the next token within a document, -100 at its end
    ids, labels, docs = b["input_ids"], b["labels"], b["document_ids"]
    same = docs[:, 1:] == docs[:, :-1]
    assert torch.equal(labels[:, :-1][same], ids[:, 1:][same])
    assert (labels[:, :-1][~same] == -100).all()
    small = tokenfeed.TokenDataset(topic, seq_len=128, batch_size=4, dtype=torch.int32)
    assert next(iter(small))["input_ids"].dtype == torch.int32


def test_dataloader_with_batch_size_none(topic):
    ds = tokenfeed.TokenDataset(topic, seq_len=64, batch_size=2, seed=3)
    direct = rows(tokenfeed.TokenDataset(topic, seq_len=64, batch_size=2, seed=3), 20)
    via = []
    for i, b in enumerate(DataLoader(ds, batch_size=None)):
        if i == 20:
            break
        via.extend(b["input_ids"].tolist())
    assert via == direct
    with pytest.raises(RuntimeError, match="num_workers=0"):
        next(iter(DataLoader(tokenfeed.TokenDataset(topic, seq_len=64, batch_size=2), batch_size=None,
                             num_workers=1)))


def test_state_dict_resumes_exactly(topic):
    full = rows(tokenfeed.TokenDataset(topic, seq_len=96, batch_size=3, seed=5, epochs=2))
    ds = tokenfeed.TokenDataset(topic, seq_len=96, batch_size=3, seed=5, epochs=2)
    it = iter(ds)
    head = []
    for _ in range(17):
        head.extend(next(it)["input_ids"].tolist())
    state = ds.state_dict()
    text = json.dumps(state)
    assert len(text) < 8192, "the state should be a few kilobytes"
    next(it)  # taken after the checkpoint: not in it
    again = tokenfeed.TokenDataset(topic, seq_len=96, batch_size=3, seed=5, epochs=2)
    again.load_state_dict(json.loads(text))
    assert head + rows(again) == full


def test_elastic_resume_with_two_ranks_then_one(topic):
    whole = rows(tokenfeed.TokenDataset(topic, seq_len=64, batch_size=4, seed=2, epochs=1))
    r0 = tokenfeed.TokenDataset(topic, seq_len=64, batch_size=2, seed=2, rank=0, world_size=2)
    r1 = tokenfeed.TokenDataset(topic, seq_len=64, batch_size=2, seed=2, rank=1, world_size=2)
    got = []
    for _, b0, b1 in zip(range(9), r0, r1):  # range first: zip stops before taking a 10th batch
        got.extend(b0["input_ids"].tolist() + b1["input_ids"].tolist())
    assert r0.state_dict() == r1.state_dict()
    one = tokenfeed.TokenDataset(topic, seq_len=64, batch_size=4, seed=2)
    one.load_state_dict(r0.state_dict())
    assert got + rows(one) == whole


def test_mixing_weights(tmp_path):
    a = make_topic(tmp_path, "a", docs=1500, seed=1)
    b = make_topic(tmp_path, "b", docs=1500, seed=2)
    ds = tokenfeed.TokenDataset({a: 3.0, b: 1.0}, seq_len=32, batch_size=8, epochs=0)
    counts = torch.zeros(2)
    for i, batch in enumerate(ds):
        counts += torch.bincount(batch["source"].long(), minlength=2)
        if i == 99:
            break
    assert abs(counts[0].item() - 600) <= 1 and abs(counts[1].item() - 200) <= 1


def test_errors_are_python_exceptions(topic, tmp_path):
    with pytest.raises(ValueError, match="seq_len"):
        tokenfeed.TokenDataset(topic, seq_len=0, batch_size=2)
    with pytest.raises(ValueError, match="batch_size"):
        tokenfeed.TokenDataset(topic, seq_len=8, batch_size=-1)
    with pytest.raises(FileNotFoundError):
        tokenfeed.TokenDataset(f"log:{tmp_path}/nothing", seq_len=8, batch_size=2)
    with pytest.raises(ValueError, match="topic URI"):
        tokenfeed.TokenDataset("http://example/x", seq_len=8, batch_size=2)
    ds = tokenfeed.TokenDataset(topic, seq_len=32, batch_size=2)
    state = ds.state_dict()
    other = tokenfeed.TokenDataset(topic, seq_len=64, batch_size=2)
    with pytest.raises(ValueError, match="other sources or settings"):
        other.load_state_dict(state)
    with pytest.raises(ValueError, match="not a TokenDataset"):
        other.load_state_dict({"something": 1})


def test_block_records_defaults_to_1024_on_the_log(topic):
    """Left unset, the log's blocks are 1024 records: the same stream and state as asking for 1024."""
    opts = dict(seq_len=64, batch_size=4, seed=9, epochs=1)
    default = tokenfeed.TokenDataset(topic, **opts)
    assert rows(default, 30) == rows(tokenfeed.TokenDataset(topic, block_records=1024, **opts), 30)
    state = tokenfeed.TokenDataset(topic, **opts).state_dict()
    tokenfeed.TokenDataset(topic, block_records=1024, **opts).load_state_dict(state)
    with pytest.raises(ValueError, match="other sources or settings"):
        tokenfeed.TokenDataset(topic, block_records=4096, **opts).load_state_dict(state)


def test_metrics_report_waiting_and_fill(topic):
    ds = tokenfeed.TokenDataset(topic, seq_len=64, batch_size=2)
    for _ in zip(range(5), ds):
        pass
    m = ds.metrics()
    assert m["batches"] == 5 and m["ready_capacity"] == 4
    assert m["wait_seconds_total"] >= 0 and m["partition_lag"]
