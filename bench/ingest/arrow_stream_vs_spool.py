#!/usr/bin/env python3
"""tokenfeed.ingest on a pyarrow Table: the Arrow C stream read in place by the
native ingest, against the JSONL spool it replaced (each batch's text column
turned into Python strings with to_pylist, written to a temporary JSONL file,
and that file ingested), on the same table.

The table is the corpus (../shared/corpus/*.jsonl) repeated --copies times,
each copy's texts made distinct so that deduplication keeps them all. Each run
is a fresh process that builds the table and then ingests it into a new
embedded-log topic; it reports the ingest's wall time and the process's peak
RSS, before the ingest (the table alone) and at its end. The two paths take
turns; wall is the best of --repeat, RSS the largest seen.

    .venv/bin/python bench/ingest/arrow_stream_vs_spool.py [--copies 6] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]

CHILD = r'''
import json, os, pathlib, resource, sys, tempfile, time
import pyarrow as pa
import tokenfeed

corpus, copies, tokenizer, to, path = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
docs = []
for f in sorted(pathlib.Path(corpus).glob("*.jsonl")):
    docs += [json.loads(line)["text"] for line in open(f, encoding="utf-8")]
docs = [f"{d} [{c}]" for c in range(copies) for d in docs]
table = pa.table({"id": pa.array(range(len(docs)), pa.int64()), "text": pa.array(docs, pa.string())})
text_bytes = table.column("text").nbytes
del docs

def spool(source):
    # The code the native stream reader replaced (python/tokenfeed/_ingest.py).
    reader = pa.RecordBatchReader.from_stream(source)
    with tempfile.TemporaryDirectory(prefix="tokenfeed-ingest-") as tmp:
        p = os.path.join(tmp, "documents.jsonl")
        with open(p, "w", encoding="utf-8", errors="surrogatepass") as f:
            for batch in reader:
                for text in batch.column("text").to_pylist():
                    f.write("{}" if text is None else json.dumps({"text": text}, ensure_ascii=False))
                    f.write("\n")
        return tokenfeed.ingest(p, to=to, tokenizer=tokenizer, format="jsonl", progress="never")

before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
if path == "spool":
    stats = spool(table)
else:
    stats = tokenfeed.ingest(table, to=to, tokenizer=tokenizer, progress="never")
wall = time.perf_counter() - t
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"wall": wall, "rss_table_kib": before, "rss_peak_kib": after, "text_bytes": text_bytes,
                  "docs": stats["documents_read"], "written": stats["documents_written"]}))
'''


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=os.environ.get("TOKENFEED_CORPUS_DIR", str(ROOT.parent / "shared" / "corpus")))
    ap.add_argument("--copies", type=int, default=6)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tokenizer", default=str(ROOT / ".cache" / "tokenizers" / "deepseek_v3" / "tokenizer.json"))
    args = ap.parse_args()
    best: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.repeat):
            for path in ("spool", "stream"):
                out = subprocess.run([sys.executable, "-c", CHILD, args.corpus, str(args.copies), args.tokenizer,
                                      f"log:{tmp}/{path}{rep}/t", path], check=True, capture_output=True, text=True)
                r = json.loads(out.stdout.strip().splitlines()[-1])
                b = best.setdefault(path, dict(r))
                b["wall"] = min(b["wall"], r["wall"])
                b["rss_peak_kib"] = max(b["rss_peak_kib"], r["rss_peak_kib"])
                b["rss_table_kib"] = max(b["rss_table_kib"], r["rss_table_kib"])
                assert r["written"] == best["spool"]["written"], (path, r)
    mb = best["stream"]["text_bytes"] / 1e6
    print(f"table: {best['stream']['docs']:,} documents, {mb:.1f} MB of text; best of {args.repeat}")
    print("| path | ingest wall s | MB/s | peak RSS MiB | of which the table MiB | added by the ingest MiB |")
    print("|---|---:|---:|---:|---:|---:|")
    for path in ("stream", "spool"):
        b = best[path]
        print(f"| {path} | {b['wall']:.2f} | {mb / b['wall']:.1f} | {b['rss_peak_kib'] / 1024:.0f} | "
              f"{b['rss_table_kib'] / 1024:.0f} | {(b['rss_peak_kib'] - b['rss_table_kib']) / 1024:.0f} |")
    s, p = best["stream"], best["spool"]
    print(f"stream / spool: wall {s['wall'] / p['wall']:.2f}x, added RSS "
          f"{(s['rss_peak_kib'] - s['rss_table_kib']) / max(1, p['rss_peak_kib'] - p['rss_table_kib']):.2f}x")


if __name__ == "__main__":
    main()
