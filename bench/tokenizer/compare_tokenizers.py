#!/usr/bin/env python3
"""tokenfeed vs HF tokenizers vs tiktoken: encode throughput, side by side.

Every document of the corpus is encoded with one call per document (single
thread), then as one batch on all cores. Each measurement is the best of
--repeat runs. Output: one Markdown table row per (tokenizer, engine, mode),
with tokenfeed's ratio to each peer first. The engines take turns, run by run.

    .venv/bin/python bench/tokenizer/compare_tokenizers.py [--corpus DIR] [--vocab deepseek_v3 ...]

--peers fastokens gigatoken adds those packages (when importable) as further
columns, with a count of the documents on which each gives tokenfeed's ids.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]


def load_docs(corpus: pathlib.Path) -> list[str]:
    docs = []
    for f in sorted(corpus.glob("*.jsonl")):
        with open(f, encoding="utf-8") as fh:
            docs.extend(json.loads(line)["text"] for line in fh)
    return docs


def tiktoken_for(tokenizer_json: dict):
    """A tiktoken Encoding with the same ranks and pattern, where one exists.

    Llama-3 and Qwen vocabularies are tiktoken-style: a token's id is its
    merge rank, and the pre-tokenizer is one Split regex. DeepSeek-V3's
    three-stage pre-tokenizer has no tiktoken equivalent.
    """
    import tiktoken

    pre = tokenizer_json["pre_tokenizer"]
    if pre is None:
        return None  # SentencePiece-style: not byte-level
    steps = pre["pretokenizers"] if pre.get("type") == "Sequence" else [pre]
    splits = [s for s in steps if s["type"] == "Split"]
    if len(splits) != 1 or "Regex" not in splits[0]["pattern"] or steps[-1]["type"] != "ByteLevel":
        return None
    alphabet = {}
    n = 0
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    for b in range(256):
        if b in printable:
            alphabet[chr(b)] = b
        else:
            alphabet[chr(256 + n)] = b
            n += 1
    ranks = {}
    for tok, i in tokenizer_json["model"]["vocab"].items():
        try:
            ranks[bytes(alphabet[c] for c in tok)] = i
        except KeyError:
            pass
    specials = {t["content"]: t["id"] for t in tokenizer_json["added_tokens"]}
    return tiktoken.Encoding("bench", pat_str=splits[0]["pattern"]["Regex"], mergeable_ranks=ranks,
                             special_tokens=specials)


def peer_engines(names: list[str], path: pathlib.Path, cores: int) -> list[tuple[str, object, object, object]]:
    """(name, single-document encode, batch encode, ids of one text) for each peer package that imports."""
    engines = []
    for name in names:
        try:
            if name == "fastokens":
                import fastokens

                ft = fastokens.Tokenizer.from_file(str(path))
                engines.append((name,
                                lambda d, ft=ft: len(ft.encode(d, add_special_tokens=False).ids),
                                lambda ds, ft=ft: sum(len(e.ids) for e in ft.encode_batch(ds, add_special_tokens=False)),
                                lambda d, ft=ft: list(ft.encode(d, add_special_tokens=False).ids)))
            elif name == "gigatoken":
                import gigatoken

                gt = gigatoken.Tokenizer(str(path))
                engines.append((name,
                                lambda d, gt=gt: len(gt.encode(d)),
                                lambda ds, gt=gt: sum(len(x) for x in gt.encode_batch_list(ds)),
                                lambda d, gt=gt: [int(x) for x in gt.encode(d)]))
            else:
                print(f"<!-- unknown peer {name} -->")
        except Exception as e:  # a peer that cannot load this file is reported, not fatal
            print(f"<!-- {name} cannot load {path.parent.name}: {type(e).__name__}: {str(e)[:200]} -->")
    return engines


def best_of(repeat: int, fn) -> tuple[float, int]:
    best, tokens = float("inf"), 0
    for _ in range(repeat):
        t = time.perf_counter()
        tokens = fn()
        best = min(best, time.perf_counter() - t)
    return best, tokens


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=os.environ.get("TOKENFEED_CORPUS_DIR", str(ROOT.parent / "shared" / "corpus")))
    ap.add_argument("--vocab", nargs="*", default=["deepseek_v3", "llama3", "qwen3"])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-all-cores", action="store_true")
    ap.add_argument("--peers", nargs="*", default=[], help="further engines: fastokens, gigatoken")
    args = ap.parse_args()

    import tokenfeed
    from tokenizers import Tokenizer

    docs = load_docs(pathlib.Path(args.corpus))
    nbytes = sum(len(d.encode("utf-8")) for d in docs)
    cores = os.cpu_count() or 1
    print(f"corpus: {args.corpus}: {len(docs)} documents, {nbytes / 1e6:.2f} MB; machine: {platform.processor() or platform.machine()}, {cores} cores")
    print()
    peer_cols = "".join(f" {p} MB/s | tokenfeed / {p} |" for p in args.peers)
    print("| vocabulary | mode | tokenfeed MB/s | tokenfeed Mtok/s | HF MB/s | tiktoken MB/s | tokenfeed / HF | "
          f"tokenfeed / tiktoken |{peer_cols}")
    print("|---|---|---:|---:|---:|---:|---:|---:|" + "---:|---:|" * len(args.peers))
    for vocab in args.vocab:
        path = ROOT / ".cache" / "tokenizers" / vocab / "tokenizer.json"
        spec = json.loads(path.read_text(encoding="utf-8"))
        ours = tokenfeed.Tokenizer.from_file(str(path))
        hf = Tokenizer.from_file(str(path))
        tk = tiktoken_for(spec)
        peers = peer_engines(args.peers, path, cores)

        def ours_single():
            return sum(len(ours.encode(d)) for d in docs)

        def hf_single():
            return sum(len(hf.encode(d, add_special_tokens=False).ids) for d in docs)

        def tk_single():
            return sum(len(tk.encode_ordinary(d)) for d in docs)

        def ours_batch():
            return sum(len(x) for x in ours.encode_batch(docs))

        def hf_batch():
            return sum(len(e.ids) for e in hf.encode_batch(docs, add_special_tokens=False))

        def tk_batch():
            return sum(len(x) for x in tk.encode_ordinary_batch(docs, num_threads=cores))

        modes = [("1 thread", ours_single, hf_single, tk_single, False)]
        if not args.skip_all_cores:
            modes.append((f"{cores} threads", ours_batch, hf_batch, tk_batch, True))
        for mode, fo, fh, ft, batch in modes:
            # Interleaved (ours, HF, tiktoken, peers, ours, ...), so that a change
            # in the machine's speed during the run reaches every engine alike.
            to = th = tt = float("inf")
            tp = {name: float("inf") for name, *_ in peers}
            ntok = 0
            for _ in range(args.repeat):
                t, ntok = best_of(1, fo)
                to = min(to, t)
                th = min(th, best_of(1, fh)[0])
                if tk:
                    tt = min(tt, best_of(1, ft)[0])
                for name, single, many, _ in peers:
                    run = (lambda many=many: many(docs)) if batch else (lambda single=single: sum(map(single, docs)))
                    tp[name] = min(tp[name], best_of(1, run)[0])
            tt = tt if tk else None
            tk_cell = f"{nbytes / tt / 1e6:.1f}" if tt else "n/a"
            tk_ratio = f"{tt / to:.1f}x" if tt else "n/a"
            cells = ""
            for p in args.peers:
                cells += f" {nbytes / tp[p] / 1e6:.1f} | {tp[p] / to:.1f}x |" if p in tp else " n/a | n/a |"
            print(f"| {vocab} | {mode} | {nbytes / to / 1e6:.1f} | {ntok / to / 1e6:.2f} | {nbytes / th / 1e6:.2f} | "
                  f"{tk_cell} | {th / to:.1f}x | {tk_ratio} |{cells}", flush=True)
        for name, _, _, ids_of in peers:
            agree = sum(ours.encode(d) == ids_of(d) for d in docs)
            print(f"<!-- {vocab}: {name} agrees with tokenfeed on {agree}/{len(docs)} documents -->")
        if tk:
            agree = sum(ours.encode(d) == tk.encode_ordinary(d) for d in docs)
            print(f"<!-- {vocab}: tiktoken agrees with tokenfeed on {agree}/{len(docs)} documents -->")


if __name__ == "__main__":
    main()
