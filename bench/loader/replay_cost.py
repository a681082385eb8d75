#!/usr/bin/env python3
"""What replaying a step costs: seconds and records read, by distance from the state.

A loader over URI (shuffled, packed, default windows) takes --save-at steps
and saves its state; then `tokenfeed replay` produces steps at that state,
a few steps after it, far after it, and before it (from the run's start),
and `tokenfeed seen` reports on the state. Each line: the step, where the
replay started, the steps counted past, and the wall time of the command
(one process: opening the topic, the seek, the reading, naming the pieces).

    .venv/bin/python bench/loader/replay_cost.py URI [--save-at 200] [--far 5000] \\
        [--batch-size 8] [--seq-len 2048] [--cli build/release/src/cli/tokenfeed] \\
        [--without-index-too] [--turns 2]

--without-index-too (an embedded log topic only): each replay also runs with
the topic's token index moved aside (partition-*/TOKENS renamed, and renamed
back at the end, also on an error), in turns with the indexed run: the steps
counted past then read their windows' records instead of the index.

docs/replay.md, "How it works, and what it costs".
"""

from __future__ import annotations

import argparse
import contextlib
import json
import pathlib
import subprocess
import tempfile
import time

import tokenfeed


@contextlib.contextmanager
def index_aside(uri: str):
    """The topic's TOKENS files renamed aside while the block runs."""
    if not uri.startswith("log:"):
        raise SystemExit("--without-index-too needs an embedded log topic (log:DIR/TOPIC)")
    moved = []
    try:
        for f in sorted(pathlib.Path(uri[4:]).glob("partition-*/TOKENS")):
            aside = f.with_name("TOKENS.aside")
            f.rename(aside)
            moved.append((aside, f))
        yield
    finally:
        for aside, f in moved:
            aside.rename(f)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("uri")
    ap.add_argument("--save-at", type=int, default=200)
    ap.add_argument("--far", type=int, default=5000)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--seq-len", type=int, default=2048)
    ap.add_argument("--cli", default="build/release/src/cli/tokenfeed")
    ap.add_argument("--without-index-too", action="store_true")
    ap.add_argument("--turns", type=int, default=2)
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
    modes = ["index", "no index"] if args.without_index_too else ["index"]
    for step in (args.save_at, args.save_at + 10, args.save_at + args.far, args.save_at // 2):
        rows = {}
        for _ in range(args.turns):
            for mode in modes:
                with index_aside(args.uri) if mode == "no index" else contextlib.nullcontext():
                    t0 = time.perf_counter()
                    out = subprocess.run([args.cli, "replay", "--state", path, "--step", str(step)], check=True,
                                         capture_output=True, text=True).stdout
                    secs = time.perf_counter() - t0
                rows.setdefault(mode, (out.splitlines(), []))[1].append(secs)
        base = rows[modes[0]][0]
        for mode in modes:
            lines, secs = rows[mode]
            if lines[1:] != base[1:]:
                raise SystemExit(f"step {step}: the rows replayed with and without the index differ")
            print(f"replay step {step} ({mode}): {min(secs):.3f}-{max(secs):.3f} s  {lines[0].lstrip('# ')}")
    t0 = time.perf_counter()
    out = subprocess.run([args.cli, "seen", "--state", path, "--json"], check=True, capture_output=True,
                         text=True).stdout
    secs = time.perf_counter() - t0
    report = json.loads(out)
    print(f"seen: {secs:.3f} s  " + ", ".join(f"{s['whole_records']} records whole" for s in report["sources"]))


if __name__ == "__main__":
    main()
