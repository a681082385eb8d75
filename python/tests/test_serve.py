"""tokenfeed serve on a real Kafka broker (marker: kafka).

Raw messages in, token records out, exactly once for read_committed readers:
with two instances sharing the group and one of them stopped (SIGTERM) and
started again while messages keep arriving. Malformed messages are counted
by reason and logged; the metrics endpoint serves Prometheus text.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest

from cli_helpers import cli, deepseek, records
from kafka_helpers import LocalKafka, confluent, create_topic

pytestmark = pytest.mark.kafka


class Instance:
    """One `tokenfeed serve` process, its log collected by a thread."""

    def __init__(self, broker, raw, tokens, instance_id, *extra, tokenizer=None):
        extra = [str(e) for e in extra]
        interval = [] if "--commit-interval-ms" in extra else ["--commit-interval-ms", "200"]
        self.args = [cli(), "serve", "--from", broker.uri(raw), "--to", broker.uri(tokens),
                     "--tokenizer", str(tokenizer or deepseek()),
                     "--group", f"g-{raw}", "--instance-id", instance_id, "--metrics-port", "0",
                     "--log-interval-s", "1", *interval, "--kafka-timeout-ms", "20000", *extra]
        self.lines: list[str] = []
        self.port = None
        self.p = subprocess.Popen(self.args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        deadline = time.monotonic() + 30
        while self.port is None and time.monotonic() < deadline and self.p.poll() is None:
            time.sleep(0.05)
        assert self.port is not None, "serve did not start:\n" + self.log()

    def _read(self):
        for line in self.p.stderr:
            self.lines.append(line.rstrip("\n"))
            m = re.search(r"metrics on http://127\.0\.0\.1:(\d+)/metrics", line)
            if m:
                self.port = int(m.group(1))

    def log(self) -> str:
        return "\n".join(self.lines)

    def metrics(self) -> dict[str, float]:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=5) as r:
            assert r.status == 200 and r.headers["Content-Type"].startswith("text/plain")
            body = r.read().decode()
        out = {}
        for line in body.splitlines():
            if line and not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                out[name] = float(value)
        return out

    def messages(self) -> float:
        try:
            return sum(v for k, v in self.metrics().items() if k.startswith("tokenfeed_serve_messages_total"))
        except (urllib.error.URLError, ConnectionError, OSError):
            return 0

    def stop(self, timeout=60) -> int:
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        rc = self.p.wait(timeout=timeout)
        self.reader.join(timeout=5)
        return rc

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait(timeout=30)


def raw_texts(n, start=0):
    """Half JSON objects, half plain text, all valid."""
    out = []
    for i in range(start, start + n):
        t = f"message {i}: the quick brown fox 数据 {i * 7919 % 10007} jumps"
        out.append(json.dumps({"text": t, "id": i}) if i % 2 else t)
    return out


def produce(bootstrap, topic, values, partitions, rate=None):
    ck = confluent()
    p = ck.Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "enable.idempotence": True})
    started = time.monotonic()
    for i, v in enumerate(values):
        p.produce(topic, v.encode() if isinstance(v, str) else v, partition=i % partitions)
        if rate and i % 200 == 199:
            p.poll(0)
            ahead = (i + 1) / rate - (time.monotonic() - started)
            if ahead > 0:
                time.sleep(ahead)
    assert p.flush(30) == 0


def wait_until(what, predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def test_exactly_n_records_with_two_instances_and_a_restart(kafka_broker):
    raw, tokens = LocalKafka.new_topic("raw"), LocalKafka.new_topic("tokens")
    create_topic(kafka_broker.bootstrap, raw, 4)
    n = 12000
    texts = raw_texts(n)
    a = Instance(kafka_broker, raw, tokens, "a")
    b = Instance(kafka_broker, raw, tokens, "b")
    restarted = None
    try:
        # Messages keep coming for ~4 s while one instance stops and starts.
        feeder = threading.Thread(target=produce, args=(kafka_broker.bootstrap, raw, texts, 4, n / 4.0))
        feeder.start()
        wait_until("both instances at work", lambda: a.messages() > 0 and b.messages() > 0, 30)
        assert a.stop() == 0, a.log()
        assert "stopped:" in a.log()
        done_by_a = float(re.findall(r"stopped: (\d+) messages", a.log())[-1])
        assert 0 < done_by_a < n, "the stop did not land midway"
        restarted = Instance(kafka_broker, raw, tokens, "a")
        feeder.join(timeout=60)
        wait_until("every message committed",
                   lambda: done_by_a + b.messages() + restarted.messages() >= n, 60)
        time.sleep(1)  # nothing more may come
        assert done_by_a + b.messages() + restarted.messages() == n
        assert b.stop() == 0, b.log()
        assert restarted.stop() == 0, restarted.log()
    finally:
        for i in (a, b, restarted):
            if i is not None:
                i.kill()
    got = records(kafka_broker.uri(tokens))  # read_committed
    assert len(got) == n
    positions = {(r["source"]["partition"], r["source"]["offset"]) for r in got}
    assert len(positions) == n, "a raw message produced more than one record"
    assert all(r["source"]["topic"] == kafka_broker.uri(raw) for r in got)
    assert all(r["doc_seq"] == r["source"]["offset"] for r in got)
    assert all(r["partition"] == r["source"]["partition"] for r in got)  # same partition count: p -> p
    # Each raw partition's messages in offset order, and the tokens right.
    import tokenfeed
    tok = tokenfeed.Tokenizer.from_file(deepseek())
    by_partition = {}
    for r in got:
        by_partition.setdefault(r["source"]["partition"], []).append(r["source"]["offset"])
    for p, offs in by_partition.items():
        assert offs == list(range(len(offs))), f"partition {p}"
    for r in got[:: max(1, n // 300)]:
        i = r["source"]["offset"] * 4 + r["source"]["partition"]  # produced round-robin
        raw_text = texts[i]
        text = json.loads(raw_text)["text"] if raw_text.startswith("{") else raw_text
        assert r["ids"] == tok.encode(text, split_special_tokens=True)


def test_malformed_messages_are_counted_logged_and_skipped_and_metrics_are_served(kafka_broker):
    raw, tokens = LocalKafka.new_topic("raw"), LocalKafka.new_topic("tokens")
    create_topic(kafka_broker.bootstrap, raw, 2)
    values = [
        json.dumps({"text": "good json"}),
        '{"text": "unterminated',
        json.dumps({"body": "no text field"}),
        json.dumps({"text": 17}),
        "   ",
        "good plain text",
        b"bad \xff utf-8 is repaired, not rejected",
    ]
    produce(kafka_broker.bootstrap, raw, values, 2)
    s = Instance(kafka_broker, raw, tokens, "m", "--partitions", "3")
    try:
        wait_until("every message committed", lambda: s.messages() >= len(values), 30)
        m = s.metrics()
        assert m["tokenfeed_serve_records_total"] == 3
        assert m['tokenfeed_serve_rejected_total{reason="bad_json"}'] == 1
        assert m['tokenfeed_serve_rejected_total{reason="missing_field"}'] == 1
        assert m['tokenfeed_serve_rejected_total{reason="not_a_string"}'] == 1
        assert m['tokenfeed_serve_rejected_total{reason="empty"}'] == 1
        assert m['tokenfeed_serve_transactions_total{outcome="committed"}'] >= 1
        assert m["tokenfeed_serve_assigned_partitions"] == 2
        wait_until("lag reported", lambda: s.metrics().get("tokenfeed_serve_consumer_lag_sum") == 0, 10)
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(f"http://127.0.0.1:{s.port}/other", timeout=5)
        assert e.value.code == 404
        assert s.stop() == 0
    finally:
        s.kill()
    log = s.log()
    assert re.search(r"rejected kafka://\S+ partition \d offset \d+: bad_json", log), log
    assert "missing_field" in log and "not_a_string" in log
    assert re.search(r"serve: (stopped: )?7 messages \(\d+/s\), 3 records, .* 4 rejected", log), log
    got = records(kafka_broker.uri(tokens))
    assert len(got) == 3
    import tokenfeed
    tok = tokenfeed.Tokenizer.from_file(deepseek())
    texts = sorted(tok.decode(r["ids"]) for r in got)
    assert texts == sorted(["good json", "good plain text", "bad \ufffd utf-8 is repaired, not rejected"])
    topics = json.loads(subprocess.run([cli(), "topics", kafka_broker.uri(tokens), "--json"], capture_output=True,
                                       text=True, check=True).stdout)
    assert len(topics["partitions"]) == 3


def test_serve_refuses_a_missing_raw_topic_and_two_clusters(kafka_broker):
    r = subprocess.run([cli(), "serve", "--from", kafka_broker.uri(LocalKafka.new_topic("none")), "--to",
                        kafka_broker.uri("out"), "--tokenizer", deepseek(), "--kafka-timeout-ms", "5000"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "the raw topic must exist" in r.stderr
    r = subprocess.run([cli(), "serve", "--from", kafka_broker.uri("a"), "--to", "kafka://127.0.0.1:1/b",
                        "--tokenizer", deepseek()], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "one cluster" in r.stderr


def test_a_killed_instance_restarted_with_its_id_loses_and_doubles_nothing(kafka_broker):
    """SIGKILL mid-transaction: the restart fences the dead producer and aborts its open transaction."""
    raw, tokens = LocalKafka.new_topic("raw"), LocalKafka.new_topic("tokens")
    create_topic(kafka_broker.bootstrap, raw, 2)
    n = 8000
    # A short session so that the group notices the dead member quickly.
    fast = ["-X", "session.timeout.ms=6000", "-X", "heartbeat.interval.ms=500"]
    a = Instance(kafka_broker, raw, tokens, "k", *fast)
    restarted = None
    try:
        feeder = threading.Thread(target=produce, args=(kafka_broker.bootstrap, raw, raw_texts(n), 2, n / 3.0))
        feeder.start()
        wait_until("work committed", lambda: a.messages() > n / 6, 30)
        a.kill()  # SIGKILL, most likely inside a transaction
        assert feeder.is_alive(), "the input ended before the kill: the test would prove nothing"
        restarted = Instance(kafka_broker, raw, tokens, "k", *fast)
        feeder.join(timeout=60)
        wait_until("every message after the restart", lambda: topic_end_records(kafka_broker, tokens) >= n, 90)
        assert restarted.stop() == 0, restarted.log()
    finally:
        for i in (a, restarted):
            if i is not None:
                i.kill()
    got = records(kafka_broker.uri(tokens))
    positions = [(r["source"]["partition"], r["source"]["offset"]) for r in got]
    assert len(positions) == len(set(positions)) == n


def topic_end_records(broker, topic) -> int:
    """Records a read_committed reader sees now."""
    r = subprocess.run([cli(), "inspect", broker.uri(topic), "--json"], capture_output=True, text=True, timeout=60)
    return len(r.stdout.splitlines()) if r.returncode == 0 else 0


def test_max_transaction_messages_bounds_each_transaction(kafka_broker):
    raw, tokens = LocalKafka.new_topic("raw"), LocalKafka.new_topic("tokens")
    create_topic(kafka_broker.bootstrap, raw, 1)
    n = 3000
    produce(kafka_broker.bootstrap, raw, raw_texts(n), 1)
    # A long commit interval: only the message bound ends a busy transaction.
    s = Instance(kafka_broker, raw, tokens, "t", "--max-transaction-messages", "500", "--commit-interval-ms",
                 "600000")
    try:
        wait_until("every message committed", lambda: s.messages() >= n, 60)
        m = s.metrics()
        assert m["tokenfeed_serve_records_total"] == n
        # 3000 messages in transactions of at most 500: at least 6 commits
        # (without the bound a poll of 2000 made one transaction).
        assert m['tokenfeed_serve_transactions_total{outcome="committed"}'] >= n / 500
        assert s.stop() == 0
    finally:
        s.kill()


def test_a_message_too_large_for_the_output_topic_is_skipped_not_retried_forever(kafka_broker):
    raw, tokens = LocalKafka.new_topic("raw"), LocalKafka.new_topic("tokens")
    create_topic(kafka_broker.bootstrap, raw, 1)
    # The output topic accepts far less than the producer's 1 MB default.
    create_topic(kafka_broker.bootstrap, tokens, 1, {"max.message.bytes": "4000"})
    big = " ".join(f"w{i}" for i in range(3000))  # its token record is well above 4000 bytes
    values = ["small before"] + [big] + [f"small after {i}" for i in range(20)]
    produce(kafka_broker.bootstrap, raw, values, 1)
    s = Instance(kafka_broker, raw, tokens, "p", "--no-create")
    try:
        wait_until("every message committed", lambda: s.messages() >= len(values), 60)
        m = s.metrics()
        assert m["tokenfeed_serve_records_total"] == len(values) - 1
        assert m['tokenfeed_serve_rejected_total{reason="too_long"}'] == 1
        assert m.get('tokenfeed_serve_transactions_total{outcome="aborted"}', 0) <= 2
        assert s.stop() == 0
    finally:
        s.kill()
    assert "max.message.bytes" in s.log()
    got = records(kafka_broker.uri(tokens))
    assert [r["source"]["offset"] for r in got] == [0] + list(range(2, len(values)))


def test_a_refused_delivery_is_skipped_with_a_back_off_never_a_spin(kafka_broker):
    """The broker refuses a record that the service thought would fit (the
    topic's limit was lowered after the service read it): the message is
    skipped as a counted reject after one abort, and the service goes on."""
    raw, tokens = LocalKafka.new_topic("raw"), LocalKafka.new_topic("tokens")
    create_topic(kafka_broker.bootstrap, raw, 1)
    create_topic(kafka_broker.bootstrap, tokens, 1)
    s = Instance(kafka_broker, raw, tokens, "d", "--no-create")
    try:
        ck = confluent()
        from confluent_kafka.admin import AdminClient, ConfigResource
        admin = AdminClient({"bootstrap.servers": kafka_broker.bootstrap})
        res = ConfigResource("topic", tokens, set_config={"max.message.bytes": "4000"})
        for f in admin.alter_configs([res]).values():
            f.result(timeout=30)
        time.sleep(2)
        big = " ".join(f"w{i}" for i in range(3000))
        values = ["small before", big] + [f"small after {i}" for i in range(20)]
        produce(kafka_broker.bootstrap, raw, values, 1)
        wait_until("every message committed", lambda: s.messages() >= len(values), 60)
        m = s.metrics()
        assert m["tokenfeed_serve_records_total"] == len(values) - 1
        assert m['tokenfeed_serve_rejected_total{reason="too_long"}'] == 1
        assert m['tokenfeed_serve_transactions_total{outcome="aborted"}'] <= 3
        assert s.stop() == 0
    finally:
        s.kill()
    assert "is skipped from now on" in s.log(), s.log()


def test_a_text_the_tokenizer_refuses_is_rejected_alone_not_retried_forever(kafka_broker, tmp_path):
    # Before, the failed encode aborted the transaction and the same batch was
    # processed again, for ever.
    from test_regex_path_parity import BACKTRACKING, tiny_tokenizer

    tok = tmp_path / "tokenizer.json"
    tok.write_text(json.dumps(tiny_tokenizer(BACKTRACKING)))
    raw, tokens = LocalKafka.new_topic("raw"), LocalKafka.new_topic("tokens")
    create_topic(kafka_broker.bootstrap, raw, 1)
    values = [f"fine text {i}" for i in range(20)] + ["x" + " " * 6000 + "b"] + [f"after {i}" for i in range(20)]
    produce(kafka_broker.bootstrap, raw, values, 1)
    s = Instance(kafka_broker, raw, tokens, "u", "--partitions", "1", tokenizer=tok)
    try:
        wait_until("every message committed", lambda: s.messages() >= len(values), 60)
        m = s.metrics()
        assert m['tokenfeed_serve_rejected_total{reason="untokenizable"}'] == 1
        assert m["tokenfeed_serve_records_total"] == len(values) - 1
        assert m.get('tokenfeed_serve_transactions_total{outcome="aborted"}', 0) == 0
        assert s.stop() == 0
    finally:
        s.kill()
    log = s.log()
    assert re.search(r"rejected kafka://\S+ partition 0 offset 20: untokenizable: .*retry-limit-in-match over", log), log
    tok_ = tokenfeed_tokenizer(tok)
    texts = [tok_.decode(r["ids"]) for r in records(kafka_broker.uri(tokens))]
    assert sorted(texts) == sorted(values[:20] + values[21:])


def tokenfeed_tokenizer(path):
    import tokenfeed
    return tokenfeed.Tokenizer.from_file(str(path))
