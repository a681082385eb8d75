"""TokenDataset under torchrun (gloo, several processes) and across crashes."""

from __future__ import annotations

import json
import os
import pathlib
import random
import signal
import subprocess
import sys
import time

import pytest

import tokenfeed
from dataset_helpers import make_topic
from ports import free_port

HERE = pathlib.Path(__file__).resolve().parent


def run_with_kills(args: list[str], rng: random.Random, pause: tuple[float, float]) -> int:
    """Runs resume_worker.py with `args`, SIGKILLing it after a random pause up to 7 times, until it
    finishes; returns how many times it was killed (it must finish on the last try)."""
    kills = 0
    for attempt in range(8):
        p = subprocess.Popen([sys.executable, str(HERE / "resume_worker.py"), *args])
        if attempt < 7:
            time.sleep(rng.uniform(*pause))
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
                kills += 1
        p.wait(timeout=300)
        if p.returncode == 0:
            return kills
    raise AssertionError(f"resume_worker.py {args} did not finish in 8 tries")


@pytest.fixture(scope="module")
def topic(tmp_path_factory):
    return make_topic(tmp_path_factory.mktemp("dist"), "t", docs=2500)


@pytest.mark.parametrize("nproc", [2, 3])
def test_torchrun_ranks_split_one_stream(topic, tmp_path, nproc):
    out = tmp_path / "rows.json"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    # --redirects/--tee are set to a non-zero value: torch 1.13 on Python 3.11 parses only single-stream values ("1", "2"), not its default "0".
    cmd = [sys.executable, "-m", "torch.distributed.run", f"--nproc_per_node={nproc}", "--redirects=2", "--tee=2",
           "--master_addr=127.0.0.1",
           f"--master_port={free_port()}", str(HERE / "torchrun_worker.py"), topic, str(out), "2"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(out.read_text())
    per_rank = got["rows"]
    assert len({len(rows) for rows in per_rank}) == 1, "every rank gets the same number of batches"
    assert all(s == got["states"][0] for s in got["states"])
    single = [b["input_ids"].tolist() for b in tokenfeed.TokenDataset(topic, seq_len=48, batch_size=2 * nproc, seed=11)]
    merged = []
    for step in range(len(per_rank[0])):
        row = []
        for rank in range(nproc):
            row.extend(per_rank[rank][step])
        merged.append(row)
    assert merged == single[:len(merged)]
    assert len(single) - len(merged) <= 1  # at most one step more fits a global batch of this size


def test_torchrun_sharded_ranks_read_their_share_of_one_stream(topic, tmp_path):
    """shards=4 under torchrun with 2 ranks: the global samples of one process, half the reading each."""
    out = tmp_path / "rows.json"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", "--redirects=2", "--tee=2",
           "--master_addr=127.0.0.1", f"--master_port={free_port()}", str(HERE / "torchrun_worker.py"), topic,
           str(out), "2", "4", "40"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(out.read_text())
    opts = dict(seq_len=48, seed=11, shards=4, epochs=0, rank=0, world_size=1)
    single = tokenfeed.TokenDataset(topic, batch_size=4, **opts)
    it = iter(single)
    want = [next(it)["input_ids"].tolist() for _ in range(60)]
    # Global sample j of step k (4 a step) is row i of rank j % 2, j = 4k + rank + 2i.
    for k in range(40):
        for rank in range(2):
            for i in range(2):
                assert got["rows"][rank][k][i] == want[k][rank + 2 * i], f"step {k}, rank {rank}, row {i}"
    reads = [m["records_read"] for m in got["metrics"]]
    alone = single.metrics()["records_read"]
    assert sum(reads) <= 1.25 * alone and max(reads) < 0.75 * alone, (reads, alone)
    # Each rank's state holds its shards; merged, one process goes on from step 40.
    assert got["states"][0] != got["states"][1]
    merged = tokenfeed.merge_states(got["states"])
    again = tokenfeed.TokenDataset(topic, batch_size=4, **opts)
    again.load_state_dict(merged)
    it = iter(again)
    assert [next(it)["input_ids"].tolist() for _ in range(20)] == want[40:]
    with pytest.raises(tokenfeed.InvalidArgumentError, match="merge"):
        tokenfeed.TokenDataset(topic, batch_size=4, **opts).load_state_dict(got["states"][0])


def test_torchrun_finite_sharded_ranks_end_at_one_step(topic, tmp_path):
    """shards=4, epochs=1 under torchrun with 2 ranks: both end at the same step, with one process's samples."""
    out = tmp_path / "rows.json"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", "--redirects=2", "--tee=2",
           "--master_addr=127.0.0.1", f"--master_port={free_port()}", str(HERE / "torchrun_worker.py"), topic,
           str(out), "2", "4", "0", "1"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(out.read_text())
    single = tokenfeed.TokenDataset(topic, batch_size=4, seq_len=48, seed=11, shards=4, epochs=1)
    want = [b["input_ids"].tolist() for b in single]
    assert len(want) > 0
    assert [len(rows) for rows in got["rows"]] == [len(want), len(want)]
    for k in range(len(want)):
        for rank in range(2):
            for i in range(2):
                assert got["rows"][rank][k][i] == want[k][rank + 2 * i], f"step {k}, rank {rank}, row {i}"
    # Every token of the pass is in some row: the unsharded pass's tokens are all there.
    whole = {t for b in tokenfeed.TokenDataset(topic, batch_size=1, seq_len=48, seed=11, shuffle=False)
             for t in b["input_ids"].flatten().tolist()}
    assert whole <= {t for step in want for row in step for t in row}
    # The next round goes on with the shards' streams: the global step counts on.
    assert [b["step"] for b in single][0] == len(want)


def test_finite_sharded_rank_killed_and_resumed_ends_where_it_would_have(topic, tmp_path):
    """Rank 1 of 2, shards=4, epochs=1, SIGKILLed at random: the same batches and the same end."""
    rng = random.Random(9)
    args = ["1", "2", "4", "0", "1"]
    ref = tmp_path / "ref"
    ref.mkdir()
    subprocess.run([sys.executable, str(HERE / "resume_worker.py"), topic, str(ref), *args], check=True, timeout=300)
    want = [line.split() for line in (ref / "log.txt").read_text().splitlines()]
    assert len(want) > 0
    work = tmp_path / "work"
    work.mkdir()
    assert run_with_kills([topic, str(work), *args], rng, (0.3, 0.9)) > 0
    seen: dict[str, str] = {}
    for step, digest in (line.split() for line in (work / "log.txt").read_text().splitlines()):
        assert seen.setdefault(step, digest) == digest, f"step {step} differs after a restart"
    assert sorted(seen.items(), key=lambda kv: int(kv[0])) == [tuple(x) for x in want]


def test_sharded_ranks_killed_and_resumed_each_from_its_own_state(topic, tmp_path):
    """Two ranks of shards=4, each its own process with no process group, SIGKILLed at random."""
    rng = random.Random(5)
    for rank in range(2):
        args = [topic, None, str(rank), "2", "4", "600"]
        ref = tmp_path / f"ref{rank}"
        ref.mkdir()
        subprocess.run([sys.executable, str(HERE / "resume_worker.py"), topic, str(ref), *args[2:]], check=True,
                       timeout=300)
        want = [line.split() for line in (ref / "log.txt").read_text().splitlines()]
        assert len(want) == 600
        work = tmp_path / f"work{rank}"
        work.mkdir()
        assert run_with_kills([topic, str(work), *args[2:]], rng, (0.4, 1.2)) > 0
        seen: dict[str, str] = {}
        for step, digest in (line.split() for line in (work / "log.txt").read_text().splitlines()):
            assert seen.setdefault(step, digest) == digest, f"rank {rank}: step {step} differs after a restart"
        assert sorted(seen.items(), key=lambda kv: int(kv[0])) == [tuple(x) for x in want]


def test_sigkill_and_resume_gives_the_uninterrupted_batches(topic, tmp_path):
    ref = tmp_path / "ref"
    ref.mkdir()
    subprocess.run([sys.executable, str(HERE / "resume_worker.py"), topic, str(ref)], check=True, timeout=300)
    want = {int(s): h for s, h in (line.split() for line in (ref / "log.txt").read_text().splitlines())}
    assert len(want) > 50
    work = tmp_path / "work"
    work.mkdir()
    assert run_with_kills([topic, str(work)], random.Random(3), (0.3, 1.5)) > 0
    seen: dict[int, str] = {}
    for line in (work / "log.txt").read_text().splitlines():
        step, digest = line.split()
        # A step logged twice (killed before its state was saved) must repeat the same batch.
        assert seen.setdefault(int(step), digest) == digest, f"step {step} differs after a restart"
    assert seen == want
