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

--without-index-too: each replay also runs without the topic's token index,
in turns with the indexed run: the steps counted past then read their
windows' records instead of the index. On the embedded log the index is
moved aside (partition-*/TOKENS renamed, and renamed back at the end, also on
an error); on Kafka the TOPIC-token-index and TOPIC-token-summary topics are deleted, and built again
with `tokenfeed index` after the run (the build's time is printed too).

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
def index_aside(uri: str, cli: str):
    """The topic's token index out of the way while the block runs."""
    if uri.startswith("kafka://"):
        yield from kafka_index_aside(uri, cli)
        return
    if not uri.startswith("log:"):
        raise SystemExit("--without-index-too needs a log:DIR/TOPIC or kafka:// topic")
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


def kafka_index_aside(uri: str, cli: str):
    from confluent_kafka.admin import AdminClient

    bootstrap, topic = uri[len("kafka://"):].split("/", 1)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    index_topics = [f"{topic}-token-index", f"{topic}-token-summary"]
    present = [t for t in index_topics if t in admin.list_topics(timeout=10).topics]
    for f in (admin.delete_topics(present).values() if present else []):
        f.result(60)
    deadline = time.monotonic() + 60
    while any(t in admin.list_topics(timeout=10).topics for t in index_topics):
        if time.monotonic() > deadline:
            raise SystemExit("an index topic is still there a minute after its deletion")
        time.sleep(0.2)
    try:
        yield
    finally:
        for _ in range(120):  # the deletion may still be under way on the brokers
            t0 = time.perf_counter()
            r = subprocess.run([cli, "index", uri], capture_output=True, text=True)
            if r.returncode == 0:
                print(f"  (index rebuilt in {time.perf_counter() - t0:.2f} s)")
                break
            time.sleep(0.5)
        else:
            raise SystemExit(f"could not build the index of {uri} again:\n{r.stderr}")


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
                with index_aside(args.uri, args.cli) if mode == "no index" else contextlib.nullcontext():
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
