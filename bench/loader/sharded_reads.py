#!/usr/bin/env python3
"""Bytes all ranks read for one pass's worth of steps: sharded vs every rank reading everything.

For each world size W, W ranks (rank=r, world_size=W: a sharded rank needs
no process group, so they run here one after another, in one process) take
the steps of one pass of a global batch of --global-batch rows, and the
bytes they read together are compared with one full read of the sources
(one unsharded rank, epochs=1). Sharded ranks read with shards=--shards and
epochs=0; the read-everything figure is today's default (shards=1), measured
for the smallest W > 1 and W times one full read for the others (every rank
reads every record). Windows read ahead count: what the storage serves.
With --finite, sharded ranks run with epochs=1 to the end of their epoch
(every rank ends at the same step, found from the token index) instead of
taking the pass's steps: the bytes of one whole epoch.

    .venv/bin/python bench/loader/sharded_reads.py URI [--worlds 8,32,64] [--shards 64] \\
        [--global-batch 64] [--seq-len 1024] [--block-records N] [--window-blocks N] [--finite] \\
        [-X key=value ...]

A sharded rank reads whole windows (window_blocks x block_records records of
each of its shards), and at any step holds one partly used and one read
ahead; so the excess over one full read is up to about 2 windows per shard,
small only where one pass gives each shard many windows (docs/loader.md,
"Shards"). Choose the topic, or the window, accordingly.
"""

from __future__ import annotations

import argparse
import json
import time

import tokenfeed


def shuffle_options(args) -> dict:
    out = {}
    if args.block_records:
        out["block_records"] = args.block_records
    if args.window_blocks:
        out["window_blocks"] = args.window_blocks
    return out


def pass_steps(uri: str, args) -> tuple[int, int, int]:
    """Steps of one pass, and the records and bytes one unsharded rank reads for it."""
    ds = tokenfeed.TokenDataset(uri, seq_len=args.seq_len, batch_size=args.global_batch, epochs=1,
                                kafka_properties=args.kafka_property, **shuffle_options(args))
    steps = sum(1 for _ in ds)
    m = ds.metrics()
    return steps, m["records_read"], m["bytes_read"]


def ranks_read(uri: str, world: int, steps: int, args, shards: int) -> list[dict]:
    out = []
    for rank in range(world):
        if shards > 1:
            extra = dict(shards=shards, epochs=1 if args.finite else 0)
        else:
            extra = dict(epochs=1)
        ds = tokenfeed.TokenDataset(uri, seq_len=args.seq_len, batch_size=args.global_batch // world, rank=rank,
                                    world_size=world, kafka_properties=args.kafka_property, **extra,
                                    **shuffle_options(args))
        t0 = time.perf_counter()
        first = None
        it = iter(ds)
        taken = 0
        # --finite: a sharded rank runs to the end of its epoch, wherever that is.
        limit = None if args.finite and shards > 1 else steps
        for _ in it:
            if taken == 0:
                first = time.perf_counter() - t0
            taken += 1
            if limit is not None and taken == limit:
                break
        m = ds.metrics()
        out.append({"records": m["records_read"], "bytes": m["bytes_read"], "first_batch_s": first, "steps": taken})
        del it, ds
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("uri")
    ap.add_argument("--worlds", default="8,32,64")
    ap.add_argument("--shards", type=int, default=64)
    ap.add_argument("--global-batch", type=int, default=64)
    ap.add_argument("--seq-len", type=int, default=1024)
    ap.add_argument("--block-records", type=int, default=None, help="default: the loader's")
    ap.add_argument("--window-blocks", type=int, default=None, help="default: the loader's")
    ap.add_argument("--finite", action="store_true",
                    help="sharded ranks run with epochs=1 to the end of their epoch instead of the pass's steps")
    ap.add_argument("-X", dest="kafka_property", action="append", default=[])
    args = ap.parse_args()
    steps, records, full = pass_steps(args.uri, args)
    print(json.dumps({"uri": args.uri, "pass_steps": steps, "full_read_records": records, "full_read_bytes": full}))
    worlds = [int(w) for w in args.worlds.split(",")]
    for i, world in enumerate(worlds):
        sharded = ranks_read(args.uri, world, steps, args, args.shards)
        total = sum(r["bytes"] for r in sharded)
        row = {"world": world, "shards": args.shards, "ratio_sharded": round(total / full, 3),
               "per_rank_bytes_max": max(r["bytes"] for r in sharded),
               "per_rank_bytes_min": min(r["bytes"] for r in sharded),
               "first_batch_s_max": round(max(r["first_batch_s"] for r in sharded), 3),
               "sharded_steps": sorted({r["steps"] for r in sharded})}
        if i == 0:
            everything = ranks_read(args.uri, world, steps, args, 1)
            row["ratio_read_everything"] = round(sum(r["bytes"] for r in everything) / full, 3)
        else:
            row["ratio_read_everything"] = f"{world} (every rank reads every record)"
        print(json.dumps(row))


if __name__ == "__main__":
    main()
