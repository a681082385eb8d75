#!/usr/bin/env python3
"""What replaying a step costs: seconds and records read, by distance from the state.

A loader over URI (shuffled, packed, default windows) takes --save-at steps
and saves its state; then `tokenfeed replay` produces steps at that state,
a few steps after it, far after it, and before it (from the run's start),
and `tokenfeed seen` reports on the state. Each line: the step, where the
replay started, the steps counted past, and the wall time of the command
(one process: opening the topic, the seek, the reading, naming the pieces).

    .venv/bin/python bench/loader/replay_cost.py URI [--save-at 200] [--far 5000] \\
        [--batch-size 8] [--seq-len 2048] [--cli build/release/src/cli/tokenfeed]

docs/replay.md, "How it works, and what it costs".
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time

import tokenfeed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("uri")
    ap.add_argument("--save-at", type=int, default=200)
    ap.add_argument("--far", type=int, default=5000)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--seq-len", type=int, default=2048)
    ap.add_argument("--cli", default="build/release/src/cli/tokenfeed")
    args = ap.parse_args()
    ds = tokenfeed.TokenDataset(args.uri, batch_size=args.batch_size, seq_len=args.seq_len, epochs=0, seed=1)
    it = iter(ds)
    for _ in range(args.save_at):
        next(it)
    state = ds.state_dict()
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(state, f)
        path = f.name
    print(f"state at step {args.save_at} ({args.batch_size} x {args.seq_len} tokens a step)")
    for step in (args.save_at, args.save_at + 10, args.save_at + args.far, args.save_at // 2):
        t0 = time.perf_counter()
        out = subprocess.run([args.cli, "replay", "--state", path, "--step", str(step)], check=True,
                             capture_output=True, text=True).stdout
        secs = time.perf_counter() - t0
        print(f"replay step {step}: {secs:.3f} s  {out.splitlines()[0].lstrip('# ')}")
    t0 = time.perf_counter()
    out = subprocess.run([args.cli, "seen", "--state", path, "--json"], check=True, capture_output=True,
                         text=True).stdout
    secs = time.perf_counter() - t0
    report = json.loads(out)
    print(f"seen: {secs:.3f} s  " + ", ".join(f"{s['whole_records']} records whole" for s in report["sources"]))


if __name__ == "__main__":
    main()
