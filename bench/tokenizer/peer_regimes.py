#!/usr/bin/env python3
"""tokenfeed against the fastest exact peers, in three regimes, one thread, one document per call.

The corpus's documents are split in two halves by their index (even: the
timed half A, 8.8 MB; odd: the other half B). For each vocabulary and
engine:

* cold: a fresh process loads the tokenizer and encodes A, first thing;
* steady: another fresh process first encodes 17.7 MB of other text (B, and
  B with its letters' case swapped), then A: the words of A that are common
  in the language have been seen, its rare ones not;
* repeated: that process then encodes A again, best of --repeat passes
  (every document seen before).

Every engine gets the same texts in the same order; the engines run one
after another, each in its own process, --turns times in turns (the
machine's speed drifts), and each figure is the best of the turns. Every
engine's ids are compared with tokenfeed's on every document of A, and each
engine's kept results with a second, untimed pass (an engine that reused
its output buffer would fail it); a mismatch or a failed engine is reported
and the run exits non-zero.

    .venv/bin/python bench/tokenizer/peer_regimes.py [--vocab deepseek_v3 llama3 qwen3] \\
        [--engines tokenfeed tokenfeed-numpy hf fastokens gigatoken] [--peer-path DIR] [--turns 2] \\
        [--repeat 3]

tokenfeed runs as encode() (a list of ints) and, as tokenfeed-numpy, as
encode_numpy() (a numpy array, which is what gigatoken's encode returns);
the ratio takes the faster of the two.

--peer-path: a directory that holds the peer packages (`pip install --target
DIR fastokens==0.3.5 gigatoken==0.10.0`), put on the peers' sys.path only.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Runs in the engine's own process: prints one JSON line.
CHILD = r"""
import hashlib, json, sys, time
spec = json.loads(sys.argv[1])
docs = []
import pathlib
for f in sorted(pathlib.Path(spec["corpus"]).glob("*.jsonl")):
    with open(f, encoding="utf-8") as fh:
        docs.extend(json.loads(line)["text"] for line in fh)
a = docs[0::2]
b = docs[1::2]
swap = lambda ds: [d.swapcase() for d in ds]
engine, path = spec["engine"], spec["path"]
if engine == "tokenfeed":
    import tokenfeed
    t = tokenfeed.Tokenizer.from_file(path)
    enc = lambda d: t.encode(d)
elif engine == "tokenfeed-numpy":
    import tokenfeed
    t = tokenfeed.Tokenizer.from_file(path)
    t.encode_numpy("")  # imports numpy, as importing gigatoken does, before the clock starts
    enc = lambda d: t.encode_numpy(d)
elif engine == "hf":
    from tokenizers import Tokenizer
    t = Tokenizer.from_file(path)
    enc = lambda d: t.encode(d, add_special_tokens=False).ids
elif engine == "fastokens":
    import fastokens
    t = fastokens.Tokenizer.from_file(path)
    enc = lambda d: t.encode(d, add_special_tokens=False).ids
elif engine == "gigatoken":
    import gigatoken
    t = gigatoken.Tokenizer(path)
    enc = lambda d: t.encode(d)
def timed(ds, keep=False):
    out = []
    t0 = time.perf_counter()
    if keep:
        for d in ds:
            out.append(enc(d))  # converted after the clock stops
    else:
        for d in ds:
            enc(d)
    return time.perf_counter() - t0, out
res = {"bytes": sum(len(d.encode("utf-8")) for d in a)}
if spec["mode"] == "cold":
    res["cold"], ids = timed(a, keep=True)
    digest = lambda i: hashlib.sha1(json.dumps([int(x) for x in i]).encode()).hexdigest()[:12]
    res["digest"] = [digest(i) for i in ids]
    # The results were kept as returned: an engine that hands out views of a
    # buffer it reuses would have changed them. Untimed, each copied at once.
    res["reused"] = sum(digest(list(enc(d))) != k for d, k in zip(a, res["digest"]))
else:
    timed(b + swap(b))
    res["steady"], _ = timed(a)
    res["repeated"] = min(timed(a)[0] for _ in range(spec["repeat"]))
print(json.dumps(res))
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=os.environ.get("TOKENFEED_CORPUS_DIR", str(ROOT.parent / "shared" / "corpus")))
    ap.add_argument("--vocab", nargs="*", default=["deepseek_v3", "llama3", "qwen3"])
    ap.add_argument("--engines", nargs="*", default=["tokenfeed", "tokenfeed-numpy", "hf", "fastokens", "gigatoken"])
    ap.add_argument("--peer-path", default=None)
    ap.add_argument("--turns", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    regimes = ("cold", "steady", "repeated")
    mismatch = False
    # Ours: "tokenfeed" (encode, a list of ints) and "tokenfeed-numpy"
    # (encode_numpy). The ratio is our fastest API's rate over the best peer's.
    ours = [e for e in args.engines if e.startswith("tokenfeed")]
    print("| vocabulary | regime | tokenfeed / best peer | tokenfeed MB/s | best peer | "
          + " | ".join(f"{e} MB/s" for e in args.engines) + " |")
    print("|---|---|---:|---:|---|" + "---:|" * len(args.engines))
    for vocab in args.vocab:
        path = ROOT / ".cache" / "tokenizers" / vocab / "tokenizer.json"
        best: dict[str, dict[str, float]] = {e: {} for e in args.engines}
        digests: dict[str, list[str]] = {}
        nbytes = 0
        for _ in range(args.turns):
            for engine in args.engines:
                env = dict(os.environ)
                if engine in ("fastokens", "gigatoken") and args.peer_path:
                    env["PYTHONPATH"] = args.peer_path + os.pathsep + env.get("PYTHONPATH", "")
                for mode in ("cold", "warm"):
                    spec = json.dumps({"engine": engine, "path": str(path), "corpus": args.corpus,
                                       "repeat": args.repeat, "mode": mode})
                    r = subprocess.run([sys.executable, "-c", CHILD, spec], capture_output=True, text=True,
                                       env=env, timeout=3600)
                    if r.returncode != 0:
                        print(f"<!-- {vocab}: {engine} failed: {r.stderr.strip()[-300:]} -->", flush=True)
                        mismatch = True
                        continue
                    res = json.loads(r.stdout.strip().splitlines()[-1])
                    if "digest" in res:
                        digests[engine] = res["digest"]
                    if res.get("reused"):
                        print(f"<!-- {vocab}: {engine}'s kept results changed on {res['reused']} documents: "
                              "it reuses its output buffer -->", flush=True)
                        mismatch = True
                    nbytes = res["bytes"]
                    for reg in regimes:
                        if reg in res:
                            best[engine][reg] = min(best[engine].get(reg, float("inf")), res[reg])
        for reg in regimes:
            rate = {e: nbytes / best[e][reg] / 1e6 for e in args.engines if reg in best[e]}
            peers = {e: v for e, v in rate.items() if e not in ours and e != "hf"}
            mine = {e: v for e, v in rate.items() if e in ours}
            top = max(peers, key=peers.get) if peers else None
            fastest = max(mine.values()) if mine else float("nan")
            ratio = f"**{fastest / peers[top]:.2f}x**" if top and mine else "n/a"
            cells = " | ".join(f"{rate[e]:.1f}" if e in rate else "n/a" for e in args.engines)
            print(f"| {vocab} | {reg} | {ratio} | {fastest:.1f} | {top} | {cells} |", flush=True)
        ref = digests.get("tokenfeed")
        for e, d in digests.items():
            if e == "tokenfeed" or ref is None:
                continue
            agree = sum(x == y for x, y in zip(ref, d))
            print(f"<!-- {vocab}: {e} gives tokenfeed's ids on {agree}/{len(ref)} documents of the timed half -->")
            mismatch = mismatch or agree != len(ref)
    if mismatch:
        sys.exit("peer_regimes: an engine failed or its ids differ from tokenfeed's (above)")


if __name__ == "__main__":
    main()
