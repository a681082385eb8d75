"""An exactly-once checker for `tokenfeed serve`, in the manner of Jepsen.

A three-broker loopback cluster, a feeder that produces numbered raw
documents continuously, two `serve` instances of one group, and a nemesis
that runs a bounded, seeded schedule of faults: kill -9 of an instance,
SIGSTOP/SIGCONT of an instance, and kill -9 and restart of the broker that
leads a chosen partition. After the faults, everything heals, the instances
drain the raw topic and stop, and `check` reads both topics back and lists
every anomaly: a raw message with no record or with two, a record for no raw
message, wrong token ids, a record in the wrong partition or out of raw
order, committed readers that disagree, and acknowledged raw writes missing.

Every loop is bounded in count and in time; only 127.0.0.1 is used. Not
thread-safe beyond what each class says: the test drives it from one thread,
with the feeder and the supervisor on their own.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import random
import signal
import subprocess
import threading
import time

from kafka_helpers import KAFKA_LOCAL, LocalKafka, confluent

# Words for the documents: ASCII, accents, CJK, emoji and digits, none of
# which the cleaner changes, so the expected ids are those of the text as sent.
WORDS = ["the", "quick", "brown", "fox", "jumps", "over", "lazy", "dog", "naïve", "café", "数据", "流式",
         "トークン", "😀", "ß", "Ωμέγα", "12345", "x86_64", "kafka", "exactly", "once", "—", "(", ")",
         ","]


def document_text(n: int) -> str:
    rng = random.Random(n)
    return f"doc {n}: " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 40)))


class Cluster(LocalKafka):
    """A private three-node cluster with a small heap per node."""

    def __init__(self, state_dir: pathlib.Path, heap: str):
        super().__init__(state_dir, owned=True)
        self.env = dict(os.environ, TOKENFEED_KAFKA_HEAP=heap)

    def run(self, *args, timeout=180, check=True) -> subprocess.CompletedProcess:
        r = subprocess.run([str(KAFKA_LOCAL), "--dir", str(self.dir), *map(str, args)], capture_output=True,
                           text=True, timeout=timeout, env=self.env)
        if check and r.returncode != 0:
            raise AssertionError(f"kafka-local {' '.join(map(str, args))} failed ({r.returncode}):\n{r.stderr}")
        return r

    def admin(self):
        from confluent_kafka.admin import AdminClient
        return AdminClient({"bootstrap.servers": self.bootstrap})

    def leader_of(self, topic: str, partition: int) -> int:
        md = self.admin().list_topics(topic, timeout=10).topics[topic]
        return md.partitions[partition].leader


def three_node_cluster(tmp_path_factory, name: str):
    """A module fixture's body: a private three-node Cluster, cleaned up after (skips without Java)."""
    import shutil
    if shutil.which("java") is None and not os.environ.get("TOKENFEED_KAFKA_JAVA"):
        from conftest import missing
        missing("no java binary: the Kafka tests need Java 17 to run a broker")
    c = Cluster(tmp_path_factory.mktemp(name) / "state", os.environ.get("TOKENFEED_EO_HEAP", "256m"))
    try:
        c.start(3)
        yield c
    finally:
        c.clean()


class Feeder(threading.Thread):
    """Produces document n = 0, 1, 2, ... at `rate` per second, round-robin over
    the raw partitions, until stopped or `limit` documents. Acknowledged
    n -> (partition, offset) are kept for the check (offset None where the
    delivery report has none: librdkafka reports a batch the broker already
    had, retried by the idempotent producer, as delivered without an offset);
    failed deliveries are counted."""

    def __init__(self, bootstrap: str, topic: str, partitions: int, rate: float, limit: int):
        super().__init__(daemon=True)
        self.bootstrap, self.topic, self.partitions = bootstrap, topic, partitions
        self.rate, self.limit = rate, limit
        self.acked: dict[int, tuple[int, int | None]] = {}
        self.failed = 0
        self.produced = 0
        self.error: str | None = None
        self._halt = threading.Event()

    def stop(self, timeout=90):
        self._halt.set()
        self.join(timeout)
        assert not self.is_alive(), "the feeder did not stop"
        assert self.error is None, self.error

    def _report(self, err, msg):
        if err is None:
            off = msg.offset()
            self.acked[json.loads(msg.value())["n"]] = (msg.partition(), off if off is not None and off >= 0 else None)
        else:
            self.failed += 1

    def run(self):
        try:
            ck = confluent()
            p = ck.Producer({"bootstrap.servers": self.bootstrap, "linger.ms": 5, "enable.idempotence": True,
                             "acks": "all", "message.timeout.ms": 60000})
            started = time.monotonic()
            n = 0
            while not self._halt.is_set() and n < self.limit:
                value = json.dumps({"text": document_text(n), "n": n}, ensure_ascii=False).encode()
                try:
                    p.produce(self.topic, value, partition=n % self.partitions, on_delivery=self._report)
                except BufferError:
                    p.poll(0.1)
                    continue
                n += 1
                self.produced = n
                p.poll(0)
                ahead = n / self.rate - (time.monotonic() - started)
                if ahead > 0:
                    time.sleep(min(ahead, 0.2))
            left = p.flush(90)
            if left:
                self.error = f"the feeder's producer still had {left} messages queued after 90 s"
        except Exception as e:  # reported by stop()
            self.error = f"feeder: {e!r}"


class ServeInstance:
    """One `tokenfeed serve` process with a stable --instance-id; its stderr
    goes to a file (appended across restarts)."""

    def __init__(self, args: list[str], instance_id: str, log_path: pathlib.Path):
        self.args = args + ["--instance-id", instance_id]
        self.id = instance_id
        self.log_path = log_path
        self.p: subprocess.Popen | None = None
        self.paused = False
        self.exits: list[tuple[int, str]] = []  # exit code and last error line of runs that ended on their own

    def start(self):
        with open(self.log_path, "a") as log:
            log.write(f"=== start {time.strftime('%H:%M:%S')}\n")
            log.flush()
            self.p = subprocess.Popen(self.args, stdout=subprocess.DEVNULL, stderr=log)

    def alive(self) -> bool:
        return self.p is not None and self.p.poll() is None

    def signal(self, sig):
        if self.alive():
            self.p.send_signal(sig)

    def kill9(self):
        if self.alive():
            self.p.kill()
            self.p.wait(30)

    def pause(self):
        self.signal(signal.SIGSTOP)
        self.paused = True

    def resume(self):
        self.signal(signal.SIGCONT)
        self.paused = False

    def terminate(self, timeout=60) -> int | None:
        if self.paused:
            self.resume()
        if not self.alive():
            return None
        self.p.send_signal(signal.SIGTERM)
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait(30)
            return -9

    def last_error(self) -> str:
        lines = [x for x in self.log().splitlines() if x.startswith("tokenfeed serve:")]
        return lines[-1][:400] if lines else ""

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""


class Supervisor(threading.Thread):
    """Restarts an instance that exited on its own (as a process manager
    would), counting its exit codes; the nemesis restarts what it kills."""

    MAX_RESTARTS = 30

    def __init__(self, instances: list[ServeInstance], lock: threading.Lock):
        super().__init__(daemon=True)
        self.instances, self.lock = instances, lock
        self.gave_up: str | None = None
        self._halt = threading.Event()

    def run(self):
        while not self._halt.wait(0.5):
            with self.lock:
                for i in self.instances:
                    if i.p is not None and not i.paused and i.p.poll() is not None and i.p.returncode != -9:
                        i.exits.append((i.p.returncode, i.last_error()))
                        if len(i.exits) > self.MAX_RESTARTS:
                            self.gave_up = f"serve {i.id} exited {len(i.exits)} times:\n{i.log()[-3000:]}"
                            return
                        i.start()

    def stop(self):
        self._halt.set()
        self.join(10)


@dataclasses.dataclass
class Fault:
    kind: str  # "kill9", "pause", "kill-leader"
    target: str  # instance id, or "raw:P" / "tokens:P"
    duration_s: float
    gap_s: float


def schedule(seed: int, faults: int, instance_ids: list[str], raw_partitions: int,
             out_partitions: int) -> list[Fault]:
    """A seeded schedule; the first three faults are one of each kind, so a
    short run covers every kind."""
    rng = random.Random(seed)
    kinds = ["kill9", "pause", "kill-leader"]
    rng.shuffle(kinds)
    out = []
    for k in range(faults):
        kind = kinds[k] if k < len(kinds) else rng.choice(kinds)
        if kind == "kill-leader":
            target = rng.choice([f"raw:{rng.randrange(raw_partitions)}", f"tokens:{rng.randrange(out_partitions)}"])
            duration = rng.uniform(2.0, 8.0)
        elif kind == "pause":
            target = rng.choice(instance_ids)
            # Either short, or past the group's session timeout (6 s) so that
            # the group moves the partitions and the paused producer is a zombie.
            duration = rng.choice([rng.uniform(0.5, 3.0), rng.uniform(7.0, 10.0)])
        else:
            target = rng.choice(instance_ids)
            duration = rng.uniform(0.2, 3.0)
        out.append(Fault(kind, target, round(duration, 2), round(rng.uniform(2.0, 6.0), 2)))
    return out


class Nemesis:
    """Runs a schedule of faults against the instances and the cluster. Each
    fault heals before the next one starts, so at most one broker is down."""

    def __init__(self, cluster: Cluster, topics: dict[str, str], instances: dict[str, ServeInstance],
                 lock: threading.Lock):
        self.cluster, self.topics, self.instances, self.lock = cluster, topics, instances, lock
        self.history: list[str] = []

    def run(self, faults: list[Fault], deadline: float):
        for f in faults:
            if time.monotonic() + f.duration_s + f.gap_s > deadline:
                self.history.append(f"stopped early: the run's time is up ({len(self.history)} faults done)")
                break
            t0 = time.monotonic()
            if f.kind == "kill9":
                with self.lock:
                    self.instances[f.target].kill9()
                time.sleep(f.duration_s)
                with self.lock:
                    self.instances[f.target].start()
                what = f"kill -9 serve {f.target}, restarted after {f.duration_s} s"
            elif f.kind == "pause":
                with self.lock:
                    self.instances[f.target].pause()
                time.sleep(f.duration_s)
                with self.lock:
                    self.instances[f.target].resume()
                what = f"SIGSTOP serve {f.target} for {f.duration_s} s"
            else:
                topic, partition = f.target.split(":")
                node = self.cluster.leader_of(self.topics[topic], int(partition))
                if node < 0:
                    self.history.append(f"skipped: {f.target} has no leader")
                    continue
                self.cluster.kill_node(node)
                time.sleep(f.duration_s)
                self.cluster.start_node(node)
                what = f"kill -9 broker {node} (leader of {f.target}), restarted after {f.duration_s} s"
            self.history.append(f"{what} (healed in {time.monotonic() - t0:.1f} s)")
            time.sleep(f.gap_s)


def read_topic(bootstrap: str, topic: str, isolation: str, timeout_s=60) -> dict[int, list]:
    """partition -> [(offset, value)] of every message a reader with the given
    isolation level sees, up to the partitions' ends now."""
    ck = confluent()
    from confluent_kafka.admin import AdminClient
    admin_md = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic, timeout=10)
    partitions = sorted(admin_md.topics[topic].partitions)
    c = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": f"checker-{os.getpid()}-{time.time()}",
                     "enable.auto.commit": False, "isolation.level": isolation,
                     "enable.partition.eof": True, "auto.offset.reset": "earliest"})
    try:
        ends = {}
        for p in partitions:
            lo, hi = c.get_watermark_offsets(ck.TopicPartition(topic, p), timeout=10)
            ends[p] = hi
        c.assign([ck.TopicPartition(topic, p, ck.OFFSET_BEGINNING) for p in partitions])
        out: dict[int, list] = {p: [] for p in partitions}
        done = {p for p in partitions if ends[p] == 0}
        deadline = time.monotonic() + timeout_s
        while len(done) < len(partitions):
            assert time.monotonic() < deadline, f"reading {topic} ({isolation}) took over {timeout_s} s"
            for m in c.consume(10000, 0.5):
                if m.error():
                    if m.error().code() == ck.KafkaError._PARTITION_EOF:
                        if m.offset() >= ends[m.partition()]:
                            done.add(m.partition())
                        continue
                    raise AssertionError(f"reading {topic}: {m.error()}")
                out[m.partition()].append((m.offset(), m.value()))
                if m.offset() + 1 >= ends[m.partition()]:
                    done.add(m.partition())
        return out
    finally:
        c.close()


def committed_offsets(bootstrap: str, group: str, topic: str, partitions: int) -> dict[int, int]:
    """The group's committed offsets (-1001 where none), asked as the group
    without joining it."""
    ck = confluent()
    c = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        got = c.committed([ck.TopicPartition(topic, p) for p in range(partitions)], timeout=30)
        return {tp.partition: tp.offset for tp in got}
    finally:
        c.close()


@dataclasses.dataclass
class Report:
    raw_messages: int = 0
    acked: int = 0
    feeder_failed: int = 0
    records_checked: int = 0
    aborted_records: int = 0
    acked_without_offset: int = 0
    raw_duplicates: int = 0  # documents the feeder's producer wrote twice (not serve's doing)
    anomalies: dict[str, list] = dataclasses.field(default_factory=dict)

    def add(self, kind: str, detail):
        self.anomalies.setdefault(kind, []).append(detail)

    def summary(self) -> str:
        if not self.anomalies:
            return "no anomalies"
        return "; ".join(f"{k}: {len(v)} (first: {v[:3]})" for k, v in self.anomalies.items())


def analyse(inputs: dict[tuple[int, int], tuple[int, str]], committed_records: list[dict], out_partitions: int,
            raw_uri: str, tokenizer, rep: Report) -> Report:
    """The pure part of the check: `inputs` maps each raw (partition, offset)
    to its (n, text), `committed_records` is what a read_committed reader of
    the token topic returned, in partition and offset order."""
    seen: dict[tuple[int, int], int] = {}
    last_in_order: dict[tuple[int, int], int] = {}
    for r in committed_records:
        key = (r["source"]["partition"], r["source"]["offset"])
        rep.records_checked += 1
        seen[key] = seen.get(key, 0) + 1
        if seen[key] == 2:
            rep.add("duplicate record", key)
        if key not in inputs:
            rep.add("record for no raw message", key)
            continue
        if r["source"]["topic"] != raw_uri or r["doc_seq"] != key[1]:
            rep.add("wrong source or doc_seq", (key, r["source"]["topic"], r["doc_seq"]))
        if r["partition"] != key[0] % out_partitions:
            rep.add("record in the wrong partition", (key, r["partition"]))
        # Order: within one output partition, one raw partition's records
        # come in raw offset order.
        lane = (r["partition"], key[0])
        prev = last_in_order.get(lane, -1)
        if key[1] <= prev:
            rep.add("raw partition order broken", (key, "after raw offset", prev))
        last_in_order[lane] = max(prev, key[1])
        n, text = inputs[key]
        if r["ids"] != tokenizer.encode(text, split_special_tokens=True):
            rep.add("wrong token ids", (key, n))
    for key in inputs:
        if key not in seen:
            rep.add("raw message with no record", key)
    return rep


def check(bootstrap: str, raw_topic: str, tokens_topic: str, raw_uri: str, committed_records: list[dict],
          acked: dict[int, tuple[int, int | None]], tokenizer) -> Report:
    """The whole check: `committed_records` is `tokenfeed inspect --json` of
    the token topic (a read_committed reader); both topics are read again
    here with confluent-kafka as a second reader."""
    rep = Report(acked=len(acked))
    raw = read_topic(bootstrap, raw_topic, "read_committed")
    inputs: dict[tuple[int, int], tuple[int, str]] = {}
    for p, msgs in raw.items():
        for off, value in msgs:
            d = json.loads(value)
            inputs[(p, off)] = (d["n"], d["text"])
    rep.raw_messages = len(inputs)
    # The raw side (the broker and the feeder's idempotent producer): every
    # acknowledged document is there, at its offset where the report gave one.
    where = {}
    for key, (n, _) in inputs.items():
        where.setdefault(n, []).append(key)
    for n, (p, off) in acked.items():
        keys = where.get(n, [])
        if not keys:
            rep.add("acknowledged raw write missing", (n, p, off))
        elif off is not None and (p, off) not in keys:
            rep.add("acknowledged raw write elsewhere", (n, (p, off), keys))
        if off is None:
            rep.acked_without_offset += 1
    rep.raw_duplicates = sum(len(k) - 1 for k in where.values())

    # A second, independent read_committed reader sees the same records, and
    # the records of aborted transactions (seen read_uncommitted) stay hidden.
    committed = read_topic(bootstrap, tokens_topic, "read_committed")
    uncommitted = read_topic(bootstrap, tokens_topic, "read_uncommitted")
    analyse(inputs, committed_records, len(committed), raw_uri, tokenizer, rep)
    ours = {(r["partition"], r["offset"]) for r in committed_records}
    theirs = {(p, off) for p, msgs in committed.items() for off, _ in msgs}
    everything = {(p, off) for p, msgs in uncommitted.items() for off, _ in msgs}
    if ours != theirs:
        rep.add("read_committed readers disagree", sorted(ours ^ theirs)[:10])
    rep.aborted_records = len(everything - theirs)
    if theirs - everything:
        rep.add("committed record not in the log", sorted(theirs - everything)[:10])
    return rep
