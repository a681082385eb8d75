"""Replay and seen (docs/replay.md) through the tokenfeed program and the Python API.

A shuffled, mixed (two sources), packed run of two ranks yields batches; from
a state saved part-way, `tokenfeed replay --json` and `TokenDataset.replay`
give random steps' rows again, whose pieces rebuild them token for token from
the records `tokenfeed inspect` prints; `tokenfeed seen` names exactly the
records those batches consumed, and `--contains` answers for single ones.
A sharded run resumed at another world size from merged states replays too.
"""

from __future__ import annotations

import json
import random
import re

import pytest
import torch

import tokenfeed
from cli_helpers import deepseek, records, run
from dataset_helpers import make_topic

OPTS = dict(seq_len=48, seed=5, block_records=32, window_blocks=4, shuffle=True, pack=True)


def _batches(uris, weights, *, rank, world, batch, steps, state=None, **extra):
    ds = tokenfeed.TokenDataset(dict(zip(uris, weights)), batch_size=batch, rank=rank, world_size=world,
                                **OPTS, **extra)
    if state is not None:
        ds.load_state_dict(state)
    rows, states = [], []
    it = iter(ds)
    for _ in range(steps):
        states.append(ds.state_dict())
        b = next(it)
        rows.append(b["input_ids"].clone())
    states.append(ds.state_dict())
    return rows, states


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("replay")
    a = make_topic(tmp, "a", docs=900, partitions=3, seed=1)
    b = make_topic(tmp, "b", docs=500, partitions=2, seed=2)
    recs = {}
    for uri in (a, b):
        for r in records(uri):
            recs[(uri, r["partition"], r["offset"])] = r
    return a, b, recs


def _rebuild(row, recs):
    ids = []
    for p in row["pieces"]:
        rec = recs[(p["uri"], p["partition"], p["offset"])]
        assert p["source"] == rec["source"]  # as `tokenfeed inspect --json` prints it
        assert not p["bos"] and not p["eos"]  # the records carry their EOS (ingest --add-eos)
        ids += rec["ids"][p["token_start"]:p["token_end"]]
    return ids + [0] * row["padding"]


def test_replay_through_the_cli_and_the_api_is_the_yielded_batches(sources, tmp_path):
    a, b, recs = sources
    steps, save = 24, 15
    ranks = [_batches([a, b], [2, 1], rank=r, world=2, batch=3, steps=steps) for r in range(2)]
    state = ranks[0][1][save]
    path = tmp_path / "loader.json"
    path.write_text(json.dumps(state))  # a state_dict() as a checkpoint would save it
    rng = random.Random(3)
    for k in sorted({0, save - 1, save, steps - 1, *rng.sample(range(steps), 5)}):
        out = run("replay", "--state", path, "--step", k, "--json").stdout.splitlines()
        cli_rows = [json.loads(line) for line in out]
        assert [(r["rank"], r["row"]) for r in cli_rows] == [(r, i) for r in range(2) for i in range(3)]
        api_rows = tokenfeed.TokenDataset.replay(state, k)
        for c, p in zip(cli_rows, api_rows):
            yielded = ranks[c["rank"]][0][k][c["row"]].tolist()
            assert c["step"] == k
            assert _rebuild(c, recs) == yielded, f"step {k} rank {c['rank']} row {c['row']}"
            assert p["input_ids"].tolist() == yielded
            assert c["pieces"] == p["pieces"]
        one = tokenfeed.TokenDataset.replay(state, k, rank=1)
        assert [r["input_ids"].tolist() for r in one] == [row.tolist() for row in ranks[1][0][k]]
    decoded = [json.loads(line) for line in
               run("replay", "--state", path, "--step", 3, "--rank", 0, "--json", "--decode", "--tokenizer",
                   deepseek()).stdout.splitlines()]
    assert len(decoded) == 3
    tok = tokenfeed.Tokenizer.from_file(deepseek())
    for r in decoded:
        assert r["text"] == tok.decode(ranks[0][0][3][r["row"]].tolist())
    text = run("replay", "--state", path, "--step", 3, "--rank", 0).stdout
    assert text.startswith("# step 3 (batch_size 3 x world_size 2), replayed from step 0")
    earlier = tmp_path / "earlier.json"
    earlier.write_text(json.dumps(ranks[1][1][6]))
    out = run("replay", "--state", path, "--from-state", earlier, "--step", 9, "--json").stdout.splitlines()
    assert [json.loads(line)["pieces"] for line in out] == [
        r["pieces"] for r in tokenfeed.TokenDataset.replay(state, 9, other_states=[ranks[1][1][6]])]
    head = run("replay", "--state", path, "--from-state", earlier, "--step", 9).stdout.splitlines()[0]
    assert re.search(r"replayed from step 6 \(3 steps counted past, \d+ records read\)$", head), head
    bad = run("replay", "--state", path, "--step", 3, "--rank", 5, check=False)
    assert bad.returncode == 2 and "world_size 2" in bad.stderr
    no_tokenizer = run("replay", "--state", path, "--step", 3, "--decode", check=False)
    assert no_tokenizer.returncode == 2 and "--tokenizer" in no_tokenizer.stderr
    missing = run("replay", "--state", tmp_path / "nope.json", "--step", 3, check=False)
    assert missing.returncode == 1 and "nope.json" in missing.stderr


def test_seen_is_what_the_yielded_batches_consumed(sources, tmp_path):
    a, b, recs = sources
    steps = 20
    _, states = _batches([a, b], [2, 1], rank=0, world=1, batch=4, steps=steps)
    state = states[-1]
    path = tmp_path / "loader.json"
    path.write_text(json.dumps(state))
    taken = {}
    for k in range(steps):
        for row in tokenfeed.TokenDataset.replay(state, k):
            for p in row["pieces"]:
                key = (p["uri"], p["partition"], p["offset"])
                taken[key] = taken.get(key, 0) + p["token_end"] - p["token_start"]
    whole = {key for key, n in taken.items() if n == len(recs[key]["ids"])}
    partial = {key: n for key, n in taken.items() if n < len(recs[key]["ids"])}
    assert len(whole) > 15 and partial
    report = json.loads(run("seen", "--state", path, "--json").stdout)
    seen_whole, seen_partial = set(), {}
    for src in report["sources"]:
        assert not src["all"]
        for part in src["whole"]:
            for first, end in part["ranges"]:
                seen_whole |= {(src["uri"], part["partition"], o) for o in range(first, end)}
        for p in src["partial"]:
            seen_partial[(src["uri"], p["partition"], p["offset"])] = p["tokens_taken"]
    assert seen_whole == whole
    assert seen_partial == partial
    assert sum(s["tokens"] for s in report["sources"]) == steps * 4 * OPTS["seq_len"]
    api = tokenfeed.seen(state)
    assert [s["whole_records"] for s in api["sources"]] == [s["whole_records"] for s in report["sources"]]
    # One document at a time: by file and line, and by record.
    uri, part, off = sorted(whole)[0]
    src = recs[(uri, part, off)]["source"]
    yes = run("seen", "--state", path, "--contains", f"{src['path']}:{src['line']}").stdout
    assert yes.splitlines()[0] == "yes"
    (puri, ppart, poff) = next(iter(partial))
    partly = json.loads(run("seen", "--state", path, "--contains", f"{puri}@{ppart}:{poff}", "--json").stdout)
    assert partly["answer"] == "partly"
    untouched = next(key for key in recs if key not in taken)
    line = recs[untouched]["source"]
    no = json.loads(run("seen", "--state", path, "--contains", f"{line['path']}:{line['line']}", "--json").stdout)
    assert no["answer"] == "no"
    assert no["records"] == [{"uri": untouched[0], "partition": untouched[1], "offset": untouched[2], "answer": "no"}]
    bad = run("seen", "--state", path, "--contains", "no-number-here", check=False)
    assert bad.returncode == 2 and "FILE:LINE" in bad.stderr
    other = run("seen", "--state", path, "--contains", "log:/elsewhere@0:1", check=False)
    assert other.returncode == 2 and "not one of the state's sources" in other.stderr


def test_replay_after_an_elastic_sharded_resume(sources):
    a, b, recs = sources
    sharded = dict(shards=4, epochs=0)
    first = [_batches([a, b], [1, 1], rank=r, world=2, batch=4, steps=10, **sharded) for r in range(2)]
    merged = tokenfeed.merge_states([first[r][1][-1] for r in range(2)])
    second = [_batches([a, b], [1, 1], rank=r, world=4, batch=2, steps=8, state=merged, **sharded)
              for r in range(4)]
    later = tokenfeed.merge_states([second[r][1][-1] for r in range(4)])
    for k in (10, 13, 17):
        for row in tokenfeed.TokenDataset.replay(later, k):
            yielded = second[row["rank"]][0][k - 10][row["row"]].tolist()
            assert row["input_ids"].tolist() == yielded
            assert _rebuild(row, recs) == yielded
    for k in (0, 9):  # the first part, in its own sizes
        for row in tokenfeed.TokenDataset.replay(later, k, batch_size=4, world_size=2):
            assert row["input_ids"].tolist() == first[row["rank"]][0][k][row["row"]].tolist()


@pytest.mark.kafka
def test_replay_and_seen_over_kafka(kafka_broker, tmp_path):
    from kafka_helpers import LocalKafka

    from cli_helpers import deepseek, write_jsonl

    texts = [f"document {i}: " + " ".join(["data", "pipeline", "token", "Kafka"][(i * j) % 4] for j in range(i % 60))
             for i in range(900)]
    write_jsonl(tmp_path / "docs.jsonl", texts)
    uri = kafka_broker.uri(LocalKafka.new_topic("replay"))
    run("ingest", "--tokenizer", deepseek(), "--input", tmp_path / "docs.jsonl", "--to", uri, "--partitions", "3",
        "--add-eos", "--progress", "never", "--kafka-timeout-ms", "20000")
    recs = {(uri, r["partition"], r["offset"]): r for r in records(uri)}
    rows, states = _batches([uri], [1], rank=0, world=1, batch=4, steps=12)
    path = tmp_path / "loader.json"
    path.write_text(json.dumps(states[8]))
    for k in (2, 8, 11):
        cli_rows = [json.loads(line) for line in run("replay", "--state", path, "--step", k, "--json").stdout.splitlines()]
        api_rows = tokenfeed.TokenDataset.replay(states[8], k)
        for c, p in zip(cli_rows, api_rows, strict=True):
            assert _rebuild(c, recs) == rows[k][c["row"]].tolist() == p["input_ids"].tolist()
    report = json.loads(run("seen", "--state", tmp_path / "loader.json", "--json").stdout)
    assert report["step"] == 8 and report["sources"][0]["tokens"] == 8 * 4 * OPTS["seq_len"]
    taken = {}
    for k in range(8):
        for row in tokenfeed.TokenDataset.replay(states[8], k):
            for p in row["pieces"]:
                key = (p["partition"], p["offset"])
                taken[key] = taken.get(key, 0) + p["token_end"] - p["token_start"]
    whole = [key for key, n in taken.items() if n == len(recs[(uri, *key)]["ids"])]
    untouched = next(key[1:] for key in recs if key[1:] not in taken)
    for key, expected in ((whole[0], "yes"), (untouched, "no")):
        answer = json.loads(run("seen", "--state", path, "--contains", f"{uri}@{key[0]}:{key[1]}",
                                "--json").stdout)["answer"]
        assert answer == expected, key
