#!/usr/bin/env python3
"""One TokenDataset pass over an existing topic: tokens/s and CPU seconds per M tokens.

Made for side-by-side runs on a shared machine, where a rate alone is noisy:
the CPU the client process spends per token (its librdkafka threads
included), and with --broker-pid the broker's, say more than one rate. Run
two builds in turns (PYTHONPATH=<other build's package dir>) several times
and compare the spread, not the best run. Timed after 20 warm-up batches;
seq_len 2048, batch 8.

    .venv/bin/python bench/loader/kafka_loader_rate.py kafka://127.0.0.1:PORT/TOPIC \\
        [--epochs 4] [--no-shuffle] [--block-records N] [--broker-pid PID] [-X key=value ...]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time

import tokenfeed


def process_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def broker_cpu(pid: int | None) -> float:
    if pid is None:
        return 0.0
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("uri")
    ap.add_argument("--epochs", type=int, default=4)
    ap.add_argument("--no-shuffle", action="store_true")
    ap.add_argument("--block-records", type=int, default=None, help="default: the loader's (4096 for Kafka)")
    ap.add_argument("--broker-pid", type=int, default=None, help="also report this process's CPU (the broker)")
    ap.add_argument("-X", dest="kafka_property", action="append", default=[])
    args = ap.parse_args()
    ds = tokenfeed.TokenDataset(args.uri, seq_len=2048, batch_size=8, epochs=args.epochs,
                                shuffle=not args.no_shuffle, block_records=args.block_records,
                                kafka_properties=args.kafka_property)
    n = tokens = 0
    t0 = c0 = b0 = 0.0
    for b in ds:
        n += 1
        if n == 20:
            t0, c0, b0 = time.perf_counter(), process_cpu(), broker_cpu(args.broker_pid)
        elif n > 20:
            tokens += int(b["tokens"])
    seconds = time.perf_counter() - t0
    mtok = tokens / 1e6
    print(json.dumps({"tokens_per_s_M": round(mtok / seconds, 2),
                      "client_cpu_s_per_M": round((process_cpu() - c0) / mtok, 4),
                      "broker_cpu_s_per_M": round((broker_cpu(args.broker_pid) - b0) / mtok, 4),
                      "tokens": tokens, "seconds": round(seconds, 3)}))


if __name__ == "__main__":
    main()
