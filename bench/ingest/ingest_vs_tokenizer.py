#!/usr/bin/env python3
"""Ingest (JSONL -> embedded log, all cores) as a fraction of the pure
tokenizer's all-core throughput on the same documents, side by side.

The corpus is repeated --copies times (each copy's documents made distinct, so
deduplication keeps them). The ingest is timed as a user sees it, process
start-up (loading the tokenizer) included; the start-up alone is the time of
an ingest of one document, and the share without it is reported too. The two
sides take turns; each is the best of --repeat runs.

    .venv/bin/python bench/ingest/ingest_vs_tokenizer.py [--corpus DIR] [--copies 4] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import tempfile
import time

import tokenfeed

ROOT = pathlib.Path(__file__).resolve().parents[2]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=os.environ.get("TOKENFEED_CORPUS_DIR", str(ROOT.parent / "shared" / "corpus")))
    ap.add_argument("--copies", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tokenizer", default=str(ROOT / ".cache" / "tokenizers" / "deepseek_v3" / "tokenizer.json"))
    ap.add_argument("--cli", default=str(ROOT / "build" / "release" / "src" / "cli" / "tokenfeed"))
    args = ap.parse_args()

    docs = []
    for f in sorted(pathlib.Path(args.corpus).glob("*.jsonl")):
        docs += [json.loads(line)["text"] for line in open(f, encoding="utf-8")]
    docs = [f"{d} [{c}]" for c in range(args.copies) for d in docs]
    nbytes = sum(len(d.encode()) for d in docs)
    with tempfile.TemporaryDirectory() as tmp:
        src = pathlib.Path(tmp) / "corpus.jsonl"
        with open(src, "w", encoding="utf-8") as f:
            for d in docs:
                f.write(json.dumps({"text": d}, ensure_ascii=False) + "\n")
        one = pathlib.Path(tmp) / "one.jsonl"
        one.write_text(json.dumps({"text": docs[0]}, ensure_ascii=False) + "\n", encoding="utf-8")
        tok = tokenfeed.Tokenizer.from_file(args.tokenizer)
        best_tok = best_ing = best_start = float("inf")
        for rep in range(args.repeat):
            t = time.perf_counter()
            subprocess.run([args.cli, "ingest", "--tokenizer", args.tokenizer, "--input", str(one), "--to",
                            f"log:{tmp}/one{rep}", "--partitions", "4", "--progress", "never"], check=True,
                           capture_output=True)
            best_start = min(best_start, time.perf_counter() - t)
            t = time.perf_counter()
            tok.encode_batch_numpy(docs, split_special_tokens=True)
            best_tok = min(best_tok, time.perf_counter() - t)
            t = time.perf_counter()
            subprocess.run([args.cli, "ingest", "--tokenizer", args.tokenizer, "--input", str(src), "--to",
                            f"log:{tmp}/t{rep}", "--partitions", "4", "--progress", "never"], check=True,
                           capture_output=True)
            best_ing = min(best_ing, time.perf_counter() - t)
    cores = os.cpu_count()
    print(f"{len(docs)} documents, {nbytes / 1e6:.1f} MB of text, {cores} cores")
    steady = best_ing - best_start
    print(f"ingest start-up (one document): {best_start:.2f} s")
    print("| what | MB/s (all cores) | share of the tokenizer |")
    print("|---|---:|---:|")
    print(f"| tokenfeed ingest, JSONL -> log (read, clean, dedup, tokenize, write), start-up included | "
          f"{nbytes / best_ing / 1e6:.1f} | {100 * best_tok / best_ing:.0f}% |")
    print(f"| the same, without the start-up | {nbytes / steady / 1e6:.1f} | {100 * best_tok / steady:.0f}% |")
    print(f"| Tokenizer.encode_batch_numpy on the same texts in memory | {nbytes / best_tok / 1e6:.1f} | 100% |")


if __name__ == "__main__":
    main()
