#!/usr/bin/env python3
"""tokenfeed.TokenDataset vs the baselines, side by side on the same tokens.

- memmap: a torch DataLoader over a numpy memmap of the same tokens, one
  random seq_len+1 window per sample (the Megatron-style baseline), with 0
  and 2 worker processes.
- baseline (with --kafka BOOTSTRAP): the KafkaDataset of the article this project
  started from -- JSON values, a torch.tensor per sample, DataLoader(batch_size=8)
  -- reading a topic of JSON messages; and TokenDataset over a kafka:// topic
  of token records of the same documents. The baseline's samples have different
  lengths, which DataLoader cannot stack: they are cut or padded to seq_len.

Reports tokens/s and the ratio (tokenfeed first), the time to the first batch,
and the peak resident memory of this process.

    .venv/bin/python bench/loader/compare_loaders.py --uri log:.cache/demo/topics/corpus
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import tempfile
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

import tokenfeed


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(iterable, max_tokens: int, tokens_of) -> tuple[float, float, int]:
    t0 = time.perf_counter()
    first = None
    n = 0
    for b in iterable:
        if first is None:
            first = time.perf_counter() - t0
        n += tokens_of(b)
        if n >= max_tokens:
            break
    return n / (time.perf_counter() - t0), first or 0.0, n


class MemmapWindows(Dataset):
    def __init__(self, path: str, seq_len: int, seed: int = 0):
        self.mm = np.memmap(path, dtype=np.uint32, mode="r")
        self.seq_len = seq_len
        n = (len(self.mm) - 1) // seq_len
        self.order = np.random.default_rng(seed).permutation(n)

    def __len__(self):
        return len(self.order)

    def __getitem__(self, i):
        start = int(self.order[i]) * self.seq_len
        w = torch.from_numpy(self.mm[start:start + self.seq_len + 1].astype(np.int64))
        return {"input_ids": w[:-1], "labels": w[1:]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--uri", default="log:.cache/demo/topics/corpus")
    ap.add_argument("--seq-len", type=int, default=2048)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--tokens", type=int, default=40_000_000, help="tokens read per measurement")
    args = ap.parse_args()
    T, B = args.seq_len, args.batch_size

    def tf_tokens(b):
        return int(b["tokens"])

    def dl_tokens(b):
        return b["input_ids"].numel()

    rows = []
    rss0 = rss_mb()
    ds = tokenfeed.TokenDataset(args.uri, seq_len=T, batch_size=B, seed=0, epochs=0)
    tf_rate, tf_first, _ = run(ds, args.tokens, tf_tokens)
    tf_rss = rss_mb() - rss0
    rows.append(("tokenfeed TokenDataset (shuffled, packed)", tf_rate, tf_first))

    # The same tokens in one flat file, for the memmap baseline.
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "tokens.u32")
        flat = tokenfeed.TokenDataset(args.uri, seq_len=1 << 16, batch_size=1, shuffle=False, epochs=1)
        with open(path, "wb") as f:
            for b in flat:
                f.write(b["input_ids"].numpy().astype(np.uint32).tobytes())
        for workers in (0, 2):
            dl = DataLoader(MemmapWindows(path, T), batch_size=B, num_workers=workers)
            reps = 1 + args.tokens // (len(dl.dataset) * T)
            def forever():
                for _ in range(reps):
                    yield from dl
            rate, first, _ = run(forever(), args.tokens, dl_tokens)
            rows.append((f"torch DataLoader over a numpy memmap, num_workers={workers}", rate, first))

    print(f"source: {args.uri}; seq_len {T}, batch {B}; {args.tokens / 1e6:.0f}M tokens per row; "
          f"{os.cpu_count()} cores")
    print()
    print("| loader | tokens/s | vs tokenfeed | first batch |")
    print("|---|---:|---:|---:|")
    for name, rate, first in rows:
        print(f"| {name} | {rate / 1e6:.1f} M | {rows[0][1] / rate:.1f}x | {1000 * first:.0f} ms |")
    print()
    print(f"tokenfeed resident memory growth while loading: {tf_rss:.0f} MB "
          f"(budget {256} MB + 64 MB allowed)")


if __name__ == "__main__":
    main()
