#!/usr/bin/env python3
"""tokenfeed.ingest on a pyarrow Table: the Arrow C stream read in place by the
native ingest, against the JSONL spool it replaced (each batch's text column
turned into Python strings with to_pylist, written to a temporary JSONL file,
and that file ingested), on the same table.

The table is the corpus (../shared/corpus/*.jsonl) repeated --copies times,
each copy's texts made distinct so that deduplication keeps them all, in one
record batch (as pyarrow.table() makes it from lists) or in batches of
--batch-rows, written once to an
Arrow IPC file. Each run is a fresh process that reads that file into memory
and then ingests the table into a new embedded-log topic; it reports the
ingest's wall time and the process's peak RSS before the ingest (the
interpreter, pyarrow, tokenfeed and the table) and at its end. The two paths
take turns; wall is the best of --repeat, RSS the largest seen.

    .venv/bin/python bench/ingest/arrow_stream_vs_spool.py [--copies 6] [--repeat 3] [--batch-rows N]
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

WRITE_TABLE = r'''
import json, pathlib, sys
import pyarrow as pa

corpus, copies, table_file, batch_rows = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
docs = []
for f in sorted(pathlib.Path(corpus).glob("*.jsonl")):
    docs += [json.loads(line)["text"] for line in open(f, encoding="utf-8")]
docs = [f"{d} [{c}]" for c in range(copies) for d in docs]
table = pa.table({"id": pa.array(range(len(docs)), pa.int64()), "text": pa.array(docs, pa.string())})
with pa.OSFile(table_file, "wb") as f, pa.ipc.new_file(f, table.schema) as w:
    w.write_table(table, max_chunksize=batch_rows or len(table))
'''

CHILD = r'''
import json, os, resource, sys, tempfile, time
import pyarrow as pa
import tokenfeed

table_file, tokenizer, to, path = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
with pa.OSFile(table_file) as f:
    table = pa.ipc.open_file(f).read_all()
text_bytes = table.column("text").nbytes

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
    ap.add_argument("--batch-rows", type=int, default=0, help="rows per record batch (0: the table in one batch)")
    ap.add_argument("--tokenizer", default=str(ROOT / ".cache" / "tokenizers" / "deepseek_v3" / "tokenizer.json"))
    args = ap.parse_args()
    best: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        # Written by a process of its own: Linux keeps a process's peak RSS
        # across fork and exec, so this one stays small for the runs it starts.
        table_file = os.path.join(tmp, "table.arrow")
        subprocess.run([sys.executable, "-c", WRITE_TABLE, args.corpus, str(args.copies), table_file,
                        str(args.batch_rows)], check=True)
        for rep in range(args.repeat):
            for path in ("spool", "stream"):
                out = subprocess.run([sys.executable, "-c", CHILD, table_file, args.tokenizer,
                                      f"log:{tmp}/{path}{rep}/t", path], check=True, capture_output=True, text=True)
                r = json.loads(out.stdout.strip().splitlines()[-1])
                b = best.setdefault(path, dict(r))
                b["wall"] = min(b["wall"], r["wall"])
                b["rss_peak_kib"] = max(b["rss_peak_kib"], r["rss_peak_kib"])
                b["rss_table_kib"] = max(b["rss_table_kib"], r["rss_table_kib"])
                assert r["written"] == best["spool"]["written"], (path, r)
    mb = best["stream"]["text_bytes"] / 1e6
    batches = f"batches of {args.batch_rows:,} rows" if args.batch_rows else "one batch"
    print(f"table: {best['stream']['docs']:,} documents, {mb:.1f} MB of text in {batches}; best of {args.repeat}")
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
