"""Token accounting: tokens and documents per source and epoch, in metrics() and the state.

Every count is checked against the batches actually yielded: a row's tokens
that are not padding, and its documents begun, seen as the BOS id the loader
puts before each document (the topics are ingested without one, and id 0
appears nowhere else).
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

import tokenfeed
from dataset_helpers import make_topic

BOS = 0


@pytest.fixture(scope="module")
def topics(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("acct")
    return make_topic(tmp, "a", docs=300, partitions=2, seed=1), make_topic(tmp, "b", docs=200, partitions=1, seed=2)


def tally(batches, ranks=None):
    """Per source: (tokens, documents begun) in the rows of `batches`."""
    tokens, docs = Counter(), Counter()
    for b in batches:
        ids = b["input_ids"]
        mask = b.get("attention_mask")
        for row, source in enumerate(b["source"].tolist()):
            r = ids[row] if mask is None else ids[row][mask[row] == 1]
            tokens[source] += r.numel()
            docs[source] += int((r == BOS).sum())
    return tokens, docs


def consumed(metrics_or_state):
    """Per source: (tokens, documents), summed over epochs; and the per-epoch table."""
    if "tokenfeed_loader" in metrics_or_state:
        st = metrics_or_state["tokenfeed_loader"]
        parts = [st["consumed"]["sources"]] if "sources" in st["consumed"] else [s["consumed"] for s in st["shards"]]
        rows = [dict(source=i, **e) for part in parts for i, src in enumerate(part) for e in src]
    else:
        rows = metrics_or_state["consumed"]
    tokens, docs, by_epoch = Counter(), Counter(), Counter()
    for e in rows:
        tokens[e["source"]] += e["tokens"]
        docs[e["source"]] += e["documents"]
        by_epoch[(e["source"], e["epoch"], "tokens")] += e["tokens"]
        by_epoch[(e["source"], e["epoch"], "documents")] += e["documents"]
    return tokens, docs, by_epoch


def source_total(uri):
    """One pass over a source: (tokens with the BOS, documents), from unpacked rows long enough to hold any."""
    ds = tokenfeed.TokenDataset(uri, seq_len=4096, batch_size=1, pack=False, bos_id=BOS, shuffle=False)
    tokens, docs = tally(list(ds))
    return tokens[0], docs[0]


def test_counts_equal_the_batches_yielded_per_source_and_epoch(topics):
    a, b = topics
    ds = tokenfeed.TokenDataset({a: 3, b: 1}, seq_len=64, batch_size=4, seed=7, epochs=2, bos_id=BOS)
    batches = list(ds)
    tokens, docs = tally(batches)
    m = ds.metrics()
    got_tokens, got_docs, by_epoch = consumed(m)
    assert got_tokens == tokens and got_docs == docs
    assert sum(tokens.values()) == sum(b["tokens"] for b in batches) == m["tokens"]
    assert m["consumed_from_sample"] == 0
    # The state holds the same counts as the metrics.
    assert consumed(ds.state_dict())[:2] == (tokens, docs)
    # Each source's first pass is the whole source, once: all its tokens and documents.
    for s, uri in enumerate((a, b)):
        whole_tokens, whole_docs = source_total(uri)
        assert (by_epoch[(s, 0, "tokens")], by_epoch[(s, 0, "documents")]) == (whole_tokens, whole_docs)
        assert by_epoch[(s, 1, "tokens")] > 0
    assert all(e["uri"] == (a, b)[e["source"]] for e in m["consumed"])


def test_counts_resume_exactly_and_count_on(topics):
    a, b = topics
    opts = dict(seq_len=48, batch_size=3, seed=11, epochs=2, bos_id=BOS)
    full = tokenfeed.TokenDataset({a: 1, b: 1}, **opts)
    list(full)
    expected = consumed(full.metrics())
    ds = tokenfeed.TokenDataset({a: 1, b: 1}, **opts)
    it = iter(ds)
    head = [next(it) for _ in range(25)]
    state = json.loads(json.dumps(ds.state_dict()))
    next(it)  # taken after the checkpoint: not in it
    assert consumed(state)[:2] == tally(head)
    again = tokenfeed.TokenDataset({a: 1, b: 1}, **opts)
    again.load_state_dict(state)
    assert consumed(again.metrics())[:2] == tally(head), "loading a state restores its counts"
    list(again)
    assert consumed(again.metrics()) == expected


def test_unsharded_ranks_each_hold_the_whole_streams_counts(topics):
    a, b = topics
    r0 = tokenfeed.TokenDataset({a: 2, b: 1}, seq_len=32, batch_size=2, seed=3, rank=0, world_size=2, bos_id=BOS)
    r1 = tokenfeed.TokenDataset({a: 2, b: 1}, seq_len=32, batch_size=2, seed=3, rank=1, world_size=2, bos_id=BOS)
    got = []
    for _, b0, b1 in zip(range(12), r0, r1):
        got += [b0, b1]
    assert consumed(r0.metrics())[:2] == consumed(r1.metrics())[:2] == tally(got)


def test_sharded_counts_are_each_ranks_and_merge_into_the_sum(topics):
    a, b = topics
    opts = dict(seq_len=32, batch_size=2, seed=5, epochs=0, shards=4, bos_id=BOS, window_blocks=2, block_records=16)
    ranks = [tokenfeed.TokenDataset({a: 1, b: 1}, rank=r, world_size=2, **opts) for r in (0, 1)]
    yielded = [[], []]
    for _, b0, b1 in zip(range(30), *ranks):
        yielded[0].append(b0)
        yielded[1].append(b1)
    for r in (0, 1):
        assert consumed(ranks[r].metrics())[:2] == tally(yielded[r])
        assert consumed(ranks[r].state_dict())[:2] == tally(yielded[r])
    merged = tokenfeed.merge_states([ranks[0].state_dict(), ranks[1].state_dict()])
    both = tally(yielded[0] + yielded[1])
    assert consumed(merged)[:2] == both
    one = tokenfeed.TokenDataset({a: 1, b: 1}, rank=0, world_size=1, **{**opts, "batch_size": 4})
    one.load_state_dict(merged)
    assert consumed(one.metrics())[:2] == both
    more = [batch for _, batch in zip(range(10), one)]
    tokens, docs = tally(yielded[0] + yielded[1] + more)
    assert consumed(one.metrics())[:2] == (tokens, docs)


def test_unpacked_rows_count_what_they_hold_not_the_truncated_tail(topics):
    a, _ = topics
    ds = tokenfeed.TokenDataset(a, seq_len=24, batch_size=4, pack=False, bos_id=BOS, seed=1)
    batches = list(ds)
    assert consumed(ds.metrics())[:2] == tally(batches)
    assert consumed(ds.metrics())[1][0] == 300  # every document begun once


def test_a_state_saved_without_counts_loads_and_counts_from_its_step(topics):
    a, b = topics
    opts = dict(seq_len=32, batch_size=2, seed=2, bos_id=BOS)
    ds = tokenfeed.TokenDataset({a: 1, b: 1}, **opts)
    it = iter(ds)
    for _ in range(8):
        next(it)
    state = ds.state_dict()
    del state["tokenfeed_loader"]["consumed"]  # as a state written before the counts
    again = tokenfeed.TokenDataset({a: 1, b: 1}, **opts)
    again.load_state_dict(state)
    m = again.metrics()
    assert m["consumed_from_sample"] == 8 * 2 and m["consumed"] == []
    after = [batch for _, batch in zip(range(5), again)]
    assert consumed(again.metrics())[:2] == tally(after)
    assert again.state_dict()["tokenfeed_loader"]["consumed"]["from_sample"] == 16
    bad = ds.state_dict()
    bad["tokenfeed_loader"]["consumed"]["version"] = 9
    with pytest.raises(tokenfeed.UnsupportedError, match="consumed counts are of version 9"):
        tokenfeed.TokenDataset({a: 1, b: 1}, **opts).load_state_dict(bad)


def test_sharded_epochs_are_passes_over_the_source(tmp_path):
    """Once every shard is past its first pass, the shards' epoch-0 counts add up to the whole source."""
    small = make_topic(tmp_path, "small", docs=40, partitions=1, seed=4)
    whole_tokens, whole_docs = source_total(small)
    opts = dict(seq_len=32, batch_size=2, seed=9, epochs=0, shards=4, bos_id=BOS, window_blocks=1, block_records=4)
    ranks = [tokenfeed.TokenDataset(small, rank=r, world_size=2, **opts) for r in (0, 1)]
    steps = 3 * whole_tokens // (2 * 2 * 32)  # about three passes
    for _, b0, b1 in zip(range(steps), *ranks):
        pass
    merged = tokenfeed.merge_states([ranks[0].state_dict(), ranks[1].state_dict()])
    shards = merged["tokenfeed_loader"]["shards"]
    assert all(max(e["epoch"] for e in s["consumed"][0]) >= 1 for s in shards), "a shard is still in its first pass"
    _, _, by_epoch = consumed(merged)
    assert (by_epoch[(0, 0, "tokens")], by_epoch[(0, 0, "documents")]) == (whole_tokens, whole_docs)
