#!/usr/bin/env python3
"""TokenDataset over Kafka vs the baseline's KafkaDataset, on the same broker and tokens.

The baseline (the pipeline of the article this project started from) stores each document as a JSON
message {"input_ids": [...], "attention_mask": [...]} (ids cut to 2048), reads
it with a consumer group, json.loads each message, makes a torch.tensor per
sample, and batches with DataLoader(batch_size=8). Its samples have different
lengths, which DataLoader cannot stack; a collate function cuts or pads them to
seq_len (the smallest change that lets it run). tokenfeed reads token records
of the same documents (tokenfeed ingest) with TokenDataset.

Both read the whole topic once (the corpus --copies times), so that neither
wraps around: TokenDataset with epochs=1 to its end, the baseline for as many
batches as its topic holds documents, less 200 documents (the baseline's buffer
waits, forever, for 100 more messages at the end of a topic). The first 20
batches of each (connecting, joining the group) are not timed. The baseline's
tokens are its real ones (the attention mask's sum), not its padding.

--epochs N has TokenDataset read its topic N times, for a timing longer
than the second one pass takes; --compression sets its topic's producer
compression (lz4 by default, as the ingest's; the baseline's producer, as
written, compresses nothing).

Starts a private broker with scripts/kafka-local (or uses --bootstrap).

    .venv/bin/python bench/loader/compare_baseline_kafka.py [--corpus DIR] [--copies N] [--epochs N]
        [--compression lz4|zstd|none] [--block-records N]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import tempfile
import time

import torch
from torch.utils.data import DataLoader, Dataset

import tokenfeed

ROOT = pathlib.Path(__file__).resolve().parents[2]
TOKENIZER = ROOT / ".cache" / "tokenizers" / "deepseek_v3" / "tokenizer.json"


class BaselineKafkaDataset(Dataset):
    """The article's KafkaDataset, as written (group id, 1 s polls, a buffer)."""

    def __init__(self, topic, bootstrap_servers):
        from confluent_kafka import Consumer
        self.consumer = Consumer({"bootstrap.servers": bootstrap_servers,
                                  "group.id": f"deepseek-training-group-{time.time_ns()}",
                                  "auto.offset.reset": "earliest"})
        self.consumer.subscribe([topic])
        self.buffer = []
        self._fill_buffer()

    def _fill_buffer(self, batch_size=100):
        from confluent_kafka import KafkaException
        while len(self.buffer) < batch_size:
            msg = self.consumer.poll(timeout=1.0)
            if msg is None:
                continue
            if msg.error():
                raise KafkaException(msg.error())
            data = json.loads(msg.value().decode("utf-8"))
            input_ids = torch.tensor(data["input_ids"], dtype=torch.long)
            attention_mask = torch.tensor(data["attention_mask"], dtype=torch.long)
            self.buffer.append((input_ids, attention_mask))

    def __len__(self):
        return 1000000

    def __getitem__(self, idx):
        if not self.buffer:
            self._fill_buffer()
        return self.buffer.pop(0)


def collate_to(seq_len):
    def collate(samples):
        ids = torch.zeros(len(samples), seq_len, dtype=torch.long)
        mask = torch.zeros(len(samples), seq_len, dtype=torch.long)
        for i, (x, m) in enumerate(samples):
            n = min(len(x), seq_len)
            ids[i, :n], mask[i, :n] = x[:n], m[:n]
        return ids, mask
    return collate


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=os.environ.get("TOKENFEED_CORPUS_DIR", str(ROOT.parent / "shared" / "corpus")))
    ap.add_argument("--bootstrap", default="")
    ap.add_argument("--copies", type=int, default=3, help="times the corpus is repeated in each topic")
    ap.add_argument("--docs", type=int, default=0, help="use only the first N documents of the corpus (0: all)")
    ap.add_argument("--seq-len", type=int, default=2048)
    ap.add_argument("-X", dest="kafka_property", action="append", default=[], help="Kafka property for tokenfeed")
    ap.add_argument("--compression", default="lz4", help="producer compression of tokenfeed's topic (ingest)")
    ap.add_argument("--epochs", type=int, default=1, help="times TokenDataset reads its topic (a longer timing)")
    ap.add_argument("--block-records", type=int, default=None,
                    help="TokenDataset's block_records (default: its own, 4096 records for Kafka)")
    args = ap.parse_args()
    from confluent_kafka import Producer

    with tempfile.TemporaryDirectory() as tmp:
        state = pathlib.Path(tmp) / "kafka"
        bootstrap = args.bootstrap
        if not bootstrap:
            out = subprocess.run([str(ROOT / "scripts" / "kafka-local"), "--dir", str(state), "start"],
                                 check=True, capture_output=True, text=True).stdout
            bootstrap = out.strip().splitlines()[-1].split("=", 1)[1]
        try:
            docs = []
            for f in sorted(pathlib.Path(args.corpus).glob("*.jsonl")):
                docs += [json.loads(line)["text"] for line in open(f, encoding="utf-8")]
            if args.docs:
                docs = docs[: args.docs]
            docs = docs * args.copies
            src = pathlib.Path(tmp) / "docs.jsonl"
            with open(src, "w", encoding="utf-8") as f:
                for d in docs:
                    f.write(json.dumps({"text": d}, ensure_ascii=False) + "\n")
            # tokenfeed: records through the ingest
            subprocess.run([str(ROOT / "build/release/src/cli/tokenfeed"), "ingest", "--tokenizer", str(TOKENIZER),
                            "--input", str(src), "--to", f"kafka://{bootstrap}/tf", "--partitions", "4",
                            "--no-dedup", "--progress", "never", "--compression", args.compression],
                           check=True, capture_output=True)
            # baseline: the same ids as JSON messages (cut to 2048 as its producer does)
            tok = tokenfeed.Tokenizer.from_file(str(TOKENIZER))
            from confluent_kafka.admin import AdminClient, NewTopic
            admin = AdminClient({"bootstrap.servers": bootstrap})
            for fut in admin.create_topics([NewTopic("baseline", num_partitions=4, replication_factor=1)]).values():
                fut.result()
            failures = []
            p = Producer({"bootstrap.servers": bootstrap, "message.max.bytes": 16 << 20, "linger.ms": 20})
            for ids in tok.encode_batch(docs):
                ids = ids[:2048]
                p.produce("baseline", json.dumps({"input_ids": ids, "attention_mask": [1] * len(ids)}),
                          on_delivery=lambda err, msg: err and failures.append(err))
                p.poll(0)
            p.flush()
            if failures:
                raise SystemExit(f"{len(failures)} baseline messages failed: {failures[0]}")

            def measure(iterable, count_tokens, limit=None, warmup=20):
                # The first batches (connecting, joining the group) are not timed.
                n = tokens = 0
                t0 = None
                for b in iterable:
                    n += 1
                    if n == warmup:
                        t0 = time.perf_counter()
                    elif n > warmup:
                        tokens += count_tokens(b)
                    if n == limit:
                        break
                return tokens / (time.perf_counter() - t0), n, tokens

            ds = tokenfeed.TokenDataset(f"kafka://{bootstrap}/tf", seq_len=args.seq_len, batch_size=8,
                                        epochs=args.epochs, block_records=args.block_records, shuffle=True,
                                        kafka_properties=args.kafka_property)
            tf_rate, tf_n, tf_tokens = measure(ds, lambda b: int(b["tokens"]))
            baseline = DataLoader(BaselineKafkaDataset("baseline", bootstrap), batch_size=8,
                                  collate_fn=collate_to(args.seq_len))
            baseline_rate, baseline_n, baseline_tokens = measure(baseline, lambda b: int(b[1].sum()),
                                                                 limit=(len(docs) - 200) // 8)
        finally:
            if not args.bootstrap:
                subprocess.run([str(ROOT / "scripts" / "kafka-local"), "--dir", str(state), "stop"],
                               capture_output=True)
    print(f"{len(docs)} documents on one local broker; seq_len {args.seq_len}, batch 8; each reads its whole topic, "
          f"timed after 20 warm-up batches; tokenfeed's topic {args.compression}, read {args.epochs} time(s), "
          f"blocks of {args.block_records or 'the default'} records: "
          f"tokenfeed {tf_n} batches ({tf_tokens / 1e6:.1f} M tokens timed), "
          f"baseline {baseline_n} batches ({baseline_tokens / 1e6:.1f} M tokens timed)")
    print("| loader | tokens/s | tokenfeed / it |")
    print("|---|---:|---:|")
    print(f"| tokenfeed TokenDataset (kafka://, packed) | {tf_rate / 1e6:.2f} M | 1.0x |")
    print(f"| baseline KafkaDataset (JSON, tensor per sample, DataLoader(batch_size=8)) | {baseline_rate / 1e6:.3f} M | "
          f"{tf_rate / baseline_rate:.0f}x |")


if __name__ == "__main__":
    main()
