"""tokenfeed on a secured Kafka broker (marker: kafka): SASL_SSL with
SCRAM-SHA-512, TLS certificates made by scripts/kafka-local with openssl,
ACLs enforced by KRaft's StandardAuthorizer.

With the settings given by --kafka-config (a properties file) or -X, the
ingest writes a topic, inspect and topics read it, the loader
(tokenfeed.TokenDataset with kafka_properties) reads it, and serve turns a
raw topic into token records. A user without ACLs and a wrong password get
clear errors. No password and no private key appears in any output, error,
log, stats file, rejects file, record, loader state or metrics.
"""

from __future__ import annotations

import json
import pathlib
import signal
import subprocess
import time

import pytest

from cli_helpers import cli, deepseek, write_jsonl
from kafka_helpers import confluent
from kafka_security_helpers import secured_broker  # noqa: F401

pytestmark = pytest.mark.kafka

TEXTS = [f"secured document {i}: tokens over TLS with SCRAM, 数据 {i * 31 % 97}" for i in range(300)]


class Outputs:
    """Everything the programs printed, to be searched for secrets."""

    def __init__(self):
        self.texts: list[tuple[str, str]] = []

    def add(self, what: str, text):
        if isinstance(text, bytes):
            text = text.decode("utf-8", errors="replace")
        self.texts.append((what, text))

    def run(self, what: str, *args, timeout=120, expect_ok=True) -> subprocess.CompletedProcess:
        r = subprocess.run([cli(), *map(str, args)], capture_output=True, text=True, timeout=timeout)
        self.add(what + " stdout", r.stdout)
        self.add(what + " stderr", r.stderr)
        if expect_ok:
            assert r.returncode == 0, f"{what} failed ({r.returncode}):\n{r.stderr[-3000:]}"
        return r


@pytest.fixture(scope="module")
def setup(secured_broker, tmp_path_factory):  # noqa: F811
    k = secured_broker
    d = tmp_path_factory.mktemp("secured-clients")
    trainer = k.add_user("trainer")
    nobody = k.add_user("nobody")
    # The trainer may do anything with topics and groups named sec.* and the
    # transactional ids of serve; the partition reader's group (librdkafka
    # asks its coordinator even though it never commits) is granted too.
    k.allow("trainer", "topic", "sec.")
    k.allow("trainer", "group", "sec.")
    k.allow("trainer", "group", "tokenfeed-partition-reader", prefixed=False)
    k.allow("trainer", "transactional_id", "tokenfeed-serve.sec.")
    files = {}
    for name, user, password in (("trainer", "trainer", trainer), ("nobody", "nobody", nobody),
                                 ("wrong", "trainer", "pw-not-the-password")):
        f = d / f"{name}.properties"
        f.write_text("".join(f"{key}={value}\n" for key, value in k.client_config(user, password).items()))
        f.chmod(0o600)
        files[name] = f
    secrets = [trainer, nobody, "pw-not-the-password"] + [p.read_text().strip() for p in k.secret_files()
                                                          if p.suffix == ".password"]
    keys = [p.read_text() for p in k.secret_files() if p.suffix == ".key"]
    yield {"k": k, "dir": d, "files": files, "secrets": secrets, "keys": keys, "trainer": trainer,
           "outputs": Outputs()}


def key_lines(pem: str) -> list[str]:
    """The base64 lines of a PEM private key: any of them in an output is a leak."""
    return [line for line in pem.splitlines() if line and not line.startswith("-----")]


def admin_read_all(k, topic) -> list[bytes]:
    """Every record value of a topic, read with the administrator's certificate."""
    ck = confluent()
    c = ck.Consumer(dict(k.admin_config(), **{"group.id": "sec-admin-reader", "enable.auto.commit": False,
                                              "enable.partition.eof": True, "auto.offset.reset": "earliest"}))
    try:
        md = c.list_topics(topic, timeout=10).topics[topic]
        parts = sorted(md.partitions)
        ends = {p: c.get_watermark_offsets(ck.TopicPartition(topic, p), timeout=10)[1] for p in parts}
        c.assign([ck.TopicPartition(topic, p, ck.OFFSET_BEGINNING) for p in parts])
        out, done = [], {p for p in parts if ends[p] == 0}
        deadline = time.monotonic() + 60
        while len(done) < len(parts) and time.monotonic() < deadline:
            for m in c.consume(1000, 0.5):
                if m.error():
                    if m.error().code() == ck.KafkaError._PARTITION_EOF:
                        done.add(m.partition())
                    continue
                out.append(m.value())
        return out
    finally:
        c.close()


def test_ingest_inspect_topics_with_a_properties_file(setup, tmp_path):
    k, o, cfg = setup["k"], setup["outputs"], setup["files"]["trainer"]
    corpus = write_jsonl(tmp_path / "corpus.jsonl", TEXTS)
    stats = tmp_path / "stats.json"
    rejects = tmp_path / "rejects.jsonl"
    uri = k.uri("sec.ingest")
    o.run("ingest", "ingest", "--tokenizer", deepseek(), "-i", corpus, "--to", uri, "--partitions", "2",
          "--kafka-config", cfg, "--kafka-timeout-ms", "20000", "--stats-json", stats, "--rejects", rejects)
    o.add("stats file", stats.read_text())
    o.add("rejects file", rejects.read_text() if rejects.exists() else "")
    r = o.run("inspect", "inspect", uri, "--json", "--kafka-config", cfg)
    got = [json.loads(line) for line in r.stdout.splitlines()]
    assert len(got) == len(TEXTS)
    import tokenfeed
    tok = tokenfeed.Tokenizer.from_file(deepseek())
    assert sorted(tok.decode(x["ids"]) for x in got) == sorted(TEXTS)
    r = o.run("topics", "topics", uri, "--json", "--kafka-config", cfg)
    assert sum(p["records"] for p in json.loads(r.stdout)["partitions"]) == len(TEXTS)
    # The same settings given one by one with -X.
    xs = []
    for line in cfg.read_text().splitlines():
        xs += ["-X", line]
    o.run("topics -X", "topics", uri, *xs)
    for v in admin_read_all(k, "sec.ingest"):
        o.add("record", v)


def test_loader_reads_the_secured_topic_with_kafka_properties(setup):
    k, o = setup["k"], setup["outputs"]
    import tokenfeed
    props = [f"{key}={value}" for key, value in k.client_config("trainer", setup["trainer"]).items()]
    uri = k.uri("sec.ingest")
    ds = tokenfeed.TokenDataset(uri, seq_len=32, batch_size=4, seed=1, kafka_properties=props)
    it = iter(ds)
    first = next(it)
    assert tuple(first["input_ids"].shape) == (4, 32)
    state = ds.state_dict()
    o.add("loader state", json.dumps(state))
    o.add("loader metrics", json.dumps(ds.metrics(), default=str))
    o.add("loader repr", repr(ds))
    n = 1 + sum(1 for _ in it)
    assert n >= 2
    # Without credentials the loader fails with a Python exception naming the cause.
    bad = [p for p in props if not p.startswith("sasl.password=")] + ["sasl.password=pw-not-the-password"]
    with pytest.raises(Exception) as e:
        next(iter(tokenfeed.TokenDataset(uri, seq_len=32, batch_size=4, kafka_properties=bad)))
    o.add("loader error", str(e.value))
    assert "authentication" in str(e.value).lower(), str(e.value)


def test_serve_with_x_settings_and_a_properties_file(setup, tmp_path):
    k, o = setup["k"], setup["outputs"]
    from confluent_kafka.admin import NewTopic
    admin = k.admin()
    for f in admin.create_topics([NewTopic("sec.raw", 2, 1)]).values():
        f.result(timeout=30)
    ck = confluent()
    p = ck.Producer(k.admin_config())
    for i, t in enumerate(TEXTS[:100]):
        p.produce("sec.raw", json.dumps({"text": t}).encode(), partition=i % 2)
    assert p.flush(30) == 0
    # The public settings with -X, the credentials in a file.
    creds = tmp_path / "creds.properties"
    creds.write_text(f"sasl.username=trainer\nsasl.password={setup['trainer']}\n")
    creds.chmod(0o600)
    public = [x for key, value in k.client_config("x", "y").items() if not key.startswith("sasl.user")
              and not key.startswith("sasl.pass") for x in ("-X", f"{key}={value}")]
    log = tmp_path / "serve.log"
    with open(log, "w") as err:
        s = subprocess.Popen([cli(), "serve", "--from", k.uri("sec.raw"), "--to", k.uri("sec.tokens"), "--tokenizer",
                              deepseek(), "--group", "sec.serve", "--instance-id", "s1", "--log-interval-s", "1",
                              "--kafka-timeout-ms", "20000", "--kafka-config", creds, *public],
                             stdout=subprocess.DEVNULL, stderr=err)
        try:
            deadline = time.monotonic() + 90
            count = 0
            while time.monotonic() < deadline and s.poll() is None:
                r = subprocess.run([cli(), "inspect", k.uri("sec.tokens"), "--json", "--kafka-config",
                                    setup["files"]["trainer"]], capture_output=True, text=True, timeout=60)
                count = len(r.stdout.splitlines()) if r.returncode == 0 else 0
                if count >= 100:
                    break
                time.sleep(1)
            assert count == 100, f"serve wrote {count} of 100 records:\n{log.read_text()[-3000:]}"
            s.send_signal(signal.SIGTERM)
            assert s.wait(60) == 0, log.read_text()[-3000:]
        finally:
            if s.poll() is None:
                s.kill()
                s.wait(30)
    o.add("serve log", log.read_text())
    for v in admin_read_all(k, "sec.tokens"):
        o.add("serve record", v)


def test_a_client_without_rights_or_with_a_wrong_password_gets_a_clear_error(setup, tmp_path):
    k, o, files = setup["k"], setup["outputs"], setup["files"]
    corpus = write_jsonl(tmp_path / "corpus.jsonl", TEXTS[:10])
    r = o.run("ingest nobody", "ingest", "--tokenizer", deepseek(), "-i", corpus, "--to", k.uri("sec.nobody"),
              "--kafka-config", files["nobody"], "--kafka-timeout-ms", "10000", expect_ok=False)
    assert r.returncode != 0
    assert "authoriz" in r.stderr.lower() and "sec.nobody" in r.stderr, r.stderr
    r = o.run("inspect nobody", "inspect", k.uri("sec.ingest"), "--kafka-config", files["nobody"],
              "--kafka-timeout-ms", "10000", expect_ok=False)
    assert r.returncode != 0 and "authoriz" in r.stderr.lower(), r.stderr
    r = o.run("topics wrong password", "topics", k.uri("sec.ingest"), "--kafka-config", files["wrong"],
              "--kafka-timeout-ms", "5000", expect_ok=False)
    assert r.returncode != 0 and "authentication failed" in r.stderr.lower(), r.stderr
    # A plaintext client on the TLS port is refused too, within the bound.
    r = o.run("topics plaintext", "topics", k.uri("sec.ingest"), "--kafka-timeout-ms", "5000", expect_ok=False)
    assert r.returncode != 0
    # A property librdkafka rejects is named without its value.
    r = o.run("rejected -X", "topics", k.uri("sec.ingest"), "-X", f"sasl.passwrd={setup['trainer']}",
              expect_ok=False)
    assert r.returncode != 0 and "sasl.passwrd" in r.stderr, r.stderr


def test_a_malformed_setting_is_refused_without_echoing_a_secret(setup, tmp_path):
    k = setup["k"]
    secret = setup["trainer"]
    bad = tmp_path / "bad.properties"
    bad.write_text(f"sasl.password {secret}\n")
    for what, args in (("file", ["--kafka-config", bad]), ("-X", ["-X", f"sasl.password:{secret}"])):
        r = subprocess.run([cli(), "topics", k.uri("sec.ingest"), *map(str, args)], capture_output=True, text=True,
                           timeout=60)
        assert r.returncode != 0, what
        assert secret not in r.stderr + r.stdout, f"the malformed {what} setting's secret is printed"


def test_no_password_or_key_appears_anywhere(setup):
    """Runs last in this module: searches every output gathered above, the
    broker's logs and the clients' files."""
    k, o = setup["k"], setup["outputs"]
    assert len(o.texts) > 20, "the earlier tests of this module did not run"
    needles = [s for s in setup["secrets"] if len(s) >= 8]
    for pem in setup["keys"]:
        needles += key_lines(pem)
    places = list(o.texts)
    for path in sorted(pathlib.Path(k.dir).rglob("*.log")):
        places.append((str(path), path.read_text(errors="replace")))
    for path in sorted(pathlib.Path(setup["dir"]).rglob("*")):
        if path.is_file() and path.suffix != ".properties":
            places.append((str(path), path.read_text(errors="replace")))
    leaks = [(what, n[:6] + "...") for what, text in places for n in needles if n in text]
    assert not leaks, f"secrets found in: {leaks}"
