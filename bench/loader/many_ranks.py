#!/usr/bin/env python3
"""Many rank processes against a 3-broker loopback Kafka cluster: sharded reads vs reading everything.

Starts a private three-node cluster (scripts/kafka-local, --nodes 3, in
--kafka-dir), ingests COPIES copies of the corpus (/work/shared/corpus if
present, else scripts/make_sample_corpus.py's sample) into a topic of
--partitions partitions, replication 3, with `tokenfeed ingest`, and then for
each world size W runs W rank processes at once (each a Python process with
one TokenDataset, rank=r, world_size=W, batch_size=--global-batch / W, so
that every W takes the same global steps), in turns:

  sharded           shards=S, epochs=0 (each rank reads only its shards)
  read-everything   shards=1, epochs=0 (today's default: every rank reads all)

--rounds times each, alternating. Each rank takes --steps steps, saves its
state at step --steps/2 and afterwards measures a resume from that state (a
new TokenDataset, load_state_dict, first batch), checking that the resumed
batch is the one the run gave. Per rank it reports the bytes it fetched
(librdkafka statistics: rxbytes summed over its clients and brokers, through
tokenfeed.kafka_statistics()) and the record bytes the loader read, client
CPU seconds per million of its tokens (getrusage, all threads, the hashing
of batches for the check left out), time to the first batch, time to resume,
and peak RSS over what the process held before the loader; per broker, its
JVM's CPU seconds (/proc/PID/stat) and the bytes the ranks received from it
(librdkafka's per-broker rxbytes summed over all ranks; /proc/PID/io wchar,
which counts sendfile and socket writes, as a cross-check). Two single-rank
references run first, once: W = 1 with shards=S (every global batch; each
rank's rows must equal the matching rows of it: the global batches do not
depend on W) and W = 1 unsharded (one full read of what the steps consume,
the denominator of the ratios).

Bounded: each phase has a wall-clock limit (--phase-timeout-s), every rank
a Kafka timeout, and rank loops a step count. The cluster is stopped and its
directory removed at the end (--keep-cluster keeps it running).

    .venv/bin/python bench/loader/many_ranks.py [--worlds 8,32,64] [--shards 64] [--steps 200] \\
        [--global-batch 128] \\
        [--seq-len 1024] [--partitions 12] [--copies 4] [--rounds 1] [--json OUT]

Machine notes: every process imports torch (about 0.25 GB of RSS each, much
of it shared); W = 64 needs about 15 GB of memory. On 2 cores the brokers and all ranks share the CPU,
so wall times are the machine's, not the design's; CPU seconds and bytes are
the figures to carry over (docs/capacity.md).
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import pathlib
import resource
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
KAFKA_LOCAL = ROOT / "scripts" / "kafka-local"


# ---------------------------------------------------------------- rank process

def process_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def rss_kb() -> int:
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def row_hashes(batch) -> list[str]:
    ids = batch["input_ids"].numpy()
    return [hashlib.blake2b(ids[i].tobytes(), digest_size=8).hexdigest() for i in range(ids.shape[0])]


def fetched_by_broker(stats: dict, topic: str) -> tuple[dict, int, int]:
    """Per broker node id: rxbytes over this process's clients; and the clients and connections up."""
    by_node: dict[str, int] = {}
    clients = connections = 0
    for report in stats["clients"].values():
        if report.get("type") != "consumer":
            continue
        clients += 1
        for b in report.get("brokers", {}).values():
            if b.get("nodeid", -1) < 0:  # bootstrap entries: their bytes are metadata only
                by_node["bootstrap"] = by_node.get("bootstrap", 0) + b.get("rxbytes", 0)
                continue
            key = str(b["nodeid"])
            by_node[key] = by_node.get(key, 0) + b.get("rxbytes", 0)
            connections += b.get("state") == "UP"
    return by_node, clients, connections


def count_connections(stats: dict) -> int:
    """Connections up (brokers in state UP, bootstrap entries included) over the process's consumers."""
    return sum(b.get("state") == "UP" for r in stats["clients"].values() if r.get("type") == "consumer"
               for b in r.get("brokers", {}).values())


def rank_main(cfg: dict) -> None:
    import tokenfeed  # noqa: F401  (torch is imported by TokenDataset below)
    from tokenfeed import dataset  # noqa: F401

    base_rss = rss_kb()
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        return
    opts = dict(seq_len=cfg["seq_len"], batch_size=cfg["batch"], rank=cfg["rank"], world_size=cfg["world"],
                seed=cfg["seed"], block_records=cfg["block_records"], window_blocks=cfg["window_blocks"], epochs=0,
                kafka_timeout_ms=cfg["kafka_timeout_ms"],
                kafka_properties={"statistics.interval.ms": cfg["interval_ms"]})
    if cfg["shards"] > 1:
        opts["shards"] = cfg["shards"]
    steps, save_at = cfg["steps"], cfg["steps"] // 2
    hashes: list[list[str]] = []
    hash_cpu = 0.0
    tokens = 0
    state = None
    t0, c0 = time.perf_counter(), process_cpu()
    ds = tokenfeed.TokenDataset(cfg["uri"], **opts)
    it = iter(ds)
    first = None
    for n in range(steps):
        b = next(it)
        if n == 0:
            first = time.perf_counter() - t0
        tokens += int(b["tokens"])
        h0 = time.thread_time()
        hashes.append(row_hashes(b))
        hash_cpu += time.thread_time() - h0
        if n + 1 == save_at:
            state = ds.state_dict()
    wall = time.perf_counter() - t0
    cpu = process_cpu() - c0 - hash_cpu
    m = ds.metrics()
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # One more statistics report from every client (they report every
    # interval): it counts all each fetched. A client hands its reports over
    # when it reads or closes: close them all (del), then take the reports.
    time.sleep(cfg["interval_ms"] * 2.5 / 1000)
    connections_open = count_connections(tokenfeed.kafka_statistics())
    del it, ds
    gc.collect()
    stats = tokenfeed.kafka_statistics(clear=True)
    by_node, clients, _ = fetched_by_broker(stats, cfg["topic"])
    # Resume from the state saved after step save_at: a new loader, its first batch.
    r0 = time.perf_counter()
    ds2 = tokenfeed.TokenDataset(cfg["uri"], **opts)
    ds2.load_state_dict(state)
    resumed = next(iter(ds2))
    resume_s = time.perf_counter() - r0
    resume_exact = row_hashes(resumed) == hashes[save_at]
    del ds2
    print(json.dumps({
        "rank": cfg["rank"], "tokens": tokens, "wall_s": wall, "cpu_s": cpu, "first_batch_s": first,
        "resume_s": resume_s, "resume_exact": resume_exact, "rx_by_broker": by_node,
        "rx_bytes": sum(by_node.values()), "clients": clients, "connections": connections_open,
        "records_read": m["records_read"], "record_bytes_read": m["bytes_read"],
        "buffered_bytes": m.get("buffered_bytes", 0),
        "rss_base_kb": base_rss, "rss_peak_kb": peak_rss, "hashes": hashes,
    }), flush=True)


# ---------------------------------------------------------------- the cluster

def kafka_local(kdir: pathlib.Path, *args, timeout=300) -> str:
    r = subprocess.run([sys.executable, str(KAFKA_LOCAL), "--dir", str(kdir), *map(str, args)], capture_output=True,
                       text=True, timeout=timeout)
    if r.returncode != 0:
        raise SystemExit(f"kafka-local {' '.join(map(str, args))} failed ({r.returncode}):\n{r.stderr[-3000:]}")
    return r.stdout


def broker_pids(kdir: pathlib.Path) -> dict[str, int]:
    """node id -> pid, from `kafka-local status` ("node 1: running (pid 123), broker ...")."""
    out = {}
    for line in kafka_local(kdir, "status").splitlines():
        if "running (pid " in line:
            node = line.split(":")[0].split()[1]
            out[node] = int(line.split("(pid ")[1].split(")")[0])
    return out


def proc_cpu(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_wchar(pid: int) -> int:
    for line in open(f"/proc/{pid}/io"):
        if line.startswith("wchar:"):
            return int(line.split()[1])
    return 0


def broker_sample(pids: dict[str, int]) -> dict[str, tuple[float, int]]:
    return {node: (proc_cpu(pid), proc_wchar(pid)) for node, pid in pids.items()}


# ---------------------------------------------------------------- phases

def run_phase(name: str, world: int, shards: int, batch: int, cfg: dict, pids: dict[str, int]) -> dict:
    """W rank processes at once; returns their reports and the brokers' costs."""
    procs = []
    deadline = time.monotonic() + cfg["phase_timeout_s"]
    for rank in range(world):
        rc = dict(cfg, rank=rank, world=world, shards=shards, batch=batch)
        procs.append(subprocess.Popen([sys.executable, __file__, "--rank-worker", json.dumps(rc)],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
    try:
        for p in procs:  # all imported: then they start together
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not select.select([p.stdout], [], [], left)[0]:
                    raise SystemExit(f"{name} W={world}: ranks not ready within {cfg['phase_timeout_s']} s")
                line = p.stdout.readline()
                if line.strip() == "ready":
                    break
                if not line:
                    raise SystemExit(f"{name} W={world}: a rank exited before it was ready ({p.wait()})")
        before = broker_sample(pids)
        t0 = time.perf_counter()
        for p in procs:
            p.stdin.write("go\n")
            p.stdin.flush()
        reports = []
        for p in procs:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([p.stdout], [], [], left)[0]:
                raise SystemExit(f"{name} W={world}: ranks not done within {cfg['phase_timeout_s']} s")
            line = p.stdout.readline()
            if not line:
                raise SystemExit(f"{name} W={world}: a rank failed ({p.wait()})")
            reports.append(json.loads(line))
        wall = time.perf_counter() - t0
        after = broker_sample(pids)
        for p in procs:
            p.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    brokers = {node: {"cpu_s": after[node][0] - before[node][0], "wchar": after[node][1] - before[node][1]}
               for node in pids}
    return {"name": name, "world": world, "shards": shards, "wall_s": wall, "ranks": reports, "brokers": brokers}


def summarize(phase: dict, full_bytes: int, reference_hashes: list[list[str]] | None) -> dict:
    ranks = phase["ranks"]
    w = phase["world"]
    tokens = sum(r["tokens"] for r in ranks)
    rx = [r["rx_bytes"] for r in ranks]
    rb = [r["record_bytes_read"] for r in ranks]
    rx_by_node: dict[str, int] = {}
    for r in ranks:
        for node, v in r["rx_by_broker"].items():
            rx_by_node[node] = rx_by_node.get(node, 0) + v
    identical = None
    if reference_hashes is not None:
        identical = True
        for k, ref in enumerate(reference_hashes):
            for i, h in enumerate(ref):
                if ranks[i % w]["hashes"][k][i // w] != h:
                    identical = False
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
    return {
        "phase": phase["name"], "W": w, "S": phase["shards"], "wall_s": round(phase["wall_s"], 1),
        "tokens_all_ranks": tokens,
        "rx_bytes_per_rank_mean": round(mean(rx)), "rx_bytes_per_rank_min": min(rx), "rx_bytes_per_rank_max": max(rx),
        "rx_bytes_all": sum(rx), "ratio_rx_vs_one_read": round(sum(rx) / full_bytes, 3) if full_bytes else None,
        "record_bytes_all": sum(rb),
        "cpu_s_per_M_tokens_mean": round(mean([r["cpu_s"] / (r["tokens"] / 1e6) for r in ranks]), 3),
        "first_batch_s_mean": round(mean([r["first_batch_s"] for r in ranks]), 3),
        "first_batch_s_max": round(max(r["first_batch_s"] for r in ranks), 3),
        "resume_s_mean": round(mean([r["resume_s"] for r in ranks]), 3),
        "resume_s_max": round(max(r["resume_s"] for r in ranks), 3),
        "resume_exact": all(r["resume_exact"] for r in ranks),
        "batches_identical_to_W1": identical,
        "clients_per_rank": max(r["clients"] for r in ranks),
        "connections_per_rank": max(r["connections"] for r in ranks),
        "loader_rss_mb_max": round(max(r["rss_peak_kb"] - r["rss_base_kb"] for r in ranks) / 1024, 1),
        "buffered_mb_max": round(max(r["buffered_bytes"] for r in ranks) / 2**20, 2),
        "brokers": {node: {"cpu_s": round(b["cpu_s"], 2), "rx_bytes_by_ranks": rx_by_node.get(node, 0),
                           "wchar": b["wchar"]} for node, b in sorted(phase["brokers"].items())},
    }


# ---------------------------------------------------------------- setup

def corpus_files(args, work: pathlib.Path) -> list[pathlib.Path]:
    src = pathlib.Path(args.corpus)
    if src.is_dir() and any(src.glob("*.jsonl")):
        files = sorted(src.glob("*.jsonl"))
    else:
        sample = work / "sample.jsonl"  # 20 locales x 1000 documents
        subprocess.run([sys.executable, str(ROOT / "scripts" / "make_sample_corpus.py"), str(sample), "1000"],
                       check=True)
        files = [sample]
    out = []
    for i in range(args.copies):  # real copies: the ingest reads a file only once, by inode
        for f in files:
            dst = work / "copies" / f"c{i}-{f.name}"
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, dst)
            out.append(dst)
    return out


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--rank-worker":
        rank_main(json.loads(sys.argv[2]))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worlds", default="8,32,64")
    ap.add_argument("--shards", type=int, default=64)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--global-batch", type=int, default=128, help="rows per step over all ranks (W must divide it)")
    ap.add_argument("--seq-len", type=int, default=1024)
    ap.add_argument("--block-records", type=int, default=128)
    ap.add_argument("--window-blocks", type=int, default=2)
    ap.add_argument("--partitions", type=int, default=12)
    ap.add_argument("--copies", type=int, default=4)
    ap.add_argument("--producer-batch-bytes", type=int, default=65536, help="the ingest's batch.size")
    ap.add_argument("--rounds", type=int, default=1, help="sharded / read-everything turns per W")
    ap.add_argument("--interval-ms", type=int, default=500, help="statistics.interval.ms of every rank")
    ap.add_argument("--phase-timeout-s", type=int, default=900)
    ap.add_argument("--corpus", default="/work/shared/corpus")
    ap.add_argument("--tokenizer", default=str(ROOT / ".cache" / "tokenizers" / "deepseek_v3" / "tokenizer.json"))
    ap.add_argument("--cli", default=str(ROOT / "build" / "release" / "src" / "cli" / "tokenfeed"))
    ap.add_argument("--kafka-dir", default=None, help="cluster state (default: a new temporary directory)")
    ap.add_argument("--keep-cluster", action="store_true")
    ap.add_argument("--json", default=None, help="also write every summary here")
    args = ap.parse_args()
    work = pathlib.Path(tempfile.mkdtemp(prefix="many-ranks-"))
    kdir = pathlib.Path(args.kafka_dir) if args.kafka_dir else work / "kafka"
    bootstrap = kafka_local(kdir, "start", "--nodes", "3").strip().splitlines()[-1].split("=", 1)[1]
    try:
        pids = broker_pids(kdir)
        assert len(pids) == 3, pids
        topic = f"many-ranks-{int(time.time())}"
        from confluent_kafka.admin import AdminClient, NewTopic
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_topics([NewTopic(topic, args.partitions, 3)])[topic].result(timeout=60)
        del admin  # closed now, not retrying a stopped cluster at exit
        uri = f"kafka://{bootstrap}/{topic}"
        files = corpus_files(args, work)
        t = time.perf_counter()
        subprocess.run([args.cli, "ingest", "--tokenizer", args.tokenizer, "--to", uri, "--partitions",
                        str(args.partitions), "--no-dedup", "--progress", "never", "--kafka-timeout-ms", "60000",
                        "-X", f"batch.size={args.producer_batch_bytes}", "--input", *map(str, files)],
                       check=True, timeout=1800)
        print(json.dumps({"ingest_s": round(time.perf_counter() - t, 1), "uri": uri, "files": len(files),
                          "machine": f"{os.cpu_count()} CPUs", "args": vars(args)}), flush=True)
        cfg = dict(uri=uri, topic=topic, steps=args.steps, seq_len=args.seq_len, seed=17,
                   block_records=args.block_records, window_blocks=args.window_blocks, interval_ms=args.interval_ms,
                   kafka_timeout_ms=60000, phase_timeout_s=args.phase_timeout_s)
        summaries = []
        worlds = [int(w) for w in args.worlds.split(",")]
        gb = args.global_batch
        for world in worlds:
            if gb % world or args.shards % world:
                raise SystemExit(f"W={world} must divide --global-batch {gb} and --shards {args.shards}")
        ref_sharded = run_phase("reference W=1 sharded", 1, args.shards, gb, cfg, pids)
        ref_full = run_phase("reference W=1 unsharded", 1, 1, gb, cfg, pids)
        full = ref_full["ranks"][0]["rx_bytes"]
        ref_hashes = ref_sharded["ranks"][0]["hashes"]
        for s in (summarize(ref_full, full, None), summarize(ref_sharded, full, None)):
            summaries.append(s)
            print(json.dumps(s), flush=True)
        for world in worlds:
            for _ in range(args.rounds):
                for name, shards in (("sharded", args.shards), ("read-everything", 1)):
                    s = summarize(run_phase(name, world, shards, gb // world, cfg, pids), full,
                                  ref_hashes if shards > 1 else None)
                    summaries.append(s)
                    print(json.dumps(s), flush=True)
        if args.json:
            pathlib.Path(args.json).write_text(json.dumps(summaries, indent=1))
    finally:
        if not args.keep_cluster:
            kafka_local(kdir, "stop")
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    # A SIGTERM (timeout, a job runner) unwinds like an error: the ranks are
    # killed and the cluster is stopped by the finally clauses.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    main()
