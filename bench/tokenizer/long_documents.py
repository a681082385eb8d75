#!/usr/bin/env python3
"""One-megabyte documents without spaces against HF tokenizers: the worst
case of character-level BPE without a pre-tokenizer (Llama-2), where the
whole document is one piece. Prints seconds per document for both engines
and whether their ids agree; the shapes grow the symbol count (one character
repeated), defeat cutting (random CJK, random emoji outside the BMP) or need
byte fallback throughout.

    .venv/bin/python bench/tokenizer/long_documents.py [--vocab llama2 gemma3] [--mb 1]
"""

from __future__ import annotations

import argparse
import pathlib
import random
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]


def shapes(nbytes: int) -> dict[str, str]:
    rng = random.Random(9)
    cjk = "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(nbytes // 3))
    emoji = "".join(chr(rng.randint(0x1F300, 0x1FAFF)) for _ in range(nbytes // 4))
    rare = "".join(chr(rng.randint(0x20000, 0x2A6DF)) for _ in range(nbytes // 4))
    return {"a repeated": "a" * nbytes, "中 repeated": "中" * (nbytes // 3), "random CJK": cjk,
            "random emoji": emoji, "CJK extension B (byte fallback)": rare,
            "digits": "".join(rng.choice("0123456789") for _ in range(nbytes)),
            "random letters": "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(nbytes))}


def timed(fn) -> tuple[float, list[int]]:
    t = time.perf_counter()
    ids = fn()
    return time.perf_counter() - t, ids


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vocab", nargs="*", default=["llama2", "gemma3"])
    ap.add_argument("--mb", type=float, default=1.0)
    args = ap.parse_args()
    import tokenfeed
    from tokenizers import Tokenizer

    print("| vocabulary | document | tokens | tokenfeed s | HF s | same ids |")
    print("|---|---|---:|---:|---:|---|")
    for vocab in args.vocab:
        path = str(ROOT / ".cache" / "tokenizers" / vocab / "tokenizer.json")
        ours, hf = tokenfeed.Tokenizer.from_file(path), Tokenizer.from_file(path)
        for name, doc in shapes(int(args.mb * 1_000_000)).items():
            to, got = timed(lambda: ours.encode(doc))
            th, want = timed(lambda: hf.encode(doc, add_special_tokens=False).ids)
            print(f"| {vocab} | {name} | {len(want):,} | {to:.2f} | {th:.2f} | {got == want} |", flush=True)


if __name__ == "__main__":
    main()
