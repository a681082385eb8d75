"""A real Kafka broker for the Python tests, run with scripts/kafka-local.

`kafka_broker` (session) starts a private single-node broker in a temporary
state directory and stops it after the session; `kafka_cluster` (module) does
the same with three nodes. When TOKENFEED_KAFKA_DIR names a directory with a
running broker's `bootstrap` file, that broker is used instead. Without Java
the tests skip, or fail under TOKENFEED_REQUIRE_REFERENCE=1 (conftest.missing).
"""

from __future__ import annotations

import itertools
import os
import pathlib
import shutil
import subprocess
import time

import pytest

from conftest import ROOT, missing

KAFKA_LOCAL = ROOT / "scripts" / "kafka-local"
_names = itertools.count()


class LocalKafka:
    def __init__(self, state_dir: pathlib.Path, owned: bool):
        self.dir = pathlib.Path(state_dir)
        self.owned = owned
        self.bootstrap = ""

    def run(self, *args, timeout=180, check=True) -> subprocess.CompletedProcess:
        r = subprocess.run([str(KAFKA_LOCAL), "--dir", str(self.dir), *map(str, args)], capture_output=True,
                           text=True, timeout=timeout)
        if check and r.returncode != 0:
            raise AssertionError(f"kafka-local {' '.join(map(str, args))} failed ({r.returncode}):\n{r.stderr}")
        return r

    def start(self, nodes=1):
        r = self.run("start", "--nodes", nodes, check=False)
        if r.returncode != 0:
            missing(f"could not start a Kafka broker with scripts/kafka-local (Java 17 and the jars from "
                    f"scripts/fetch-kafka.sh are needed):\n{r.stderr[-2000:]}")
        self.bootstrap = r.stdout.strip().splitlines()[-1].removeprefix("bootstrap=")

    def kill_node(self, node=1, graceful=False):
        self.run("kill-node", node, *(["--graceful"] if graceful else []))

    def start_node(self, node=1):
        self.run("start-node", node)

    def clean(self):
        if self.owned:
            self.run("clean", check=False)
            shutil.rmtree(self.dir, ignore_errors=True)

    def uri(self, topic: str) -> str:
        return f"kafka://{self.bootstrap}/{topic}"

    @staticmethod
    def new_topic(prefix="t") -> str:
        """A topic name unique in this session (the tests share one broker)."""
        return f"{prefix}.{os.getpid()}.{next(_names)}.{int(time.time() * 1000) % 100000}"


def _start(tmp_path_factory, name: str, nodes: int) -> LocalKafka:
    if shutil.which("java") is None and not os.environ.get("TOKENFEED_KAFKA_JAVA"):
        missing("no java binary: the Kafka tests need Java 17 to run a broker")
    given = os.environ.get("TOKENFEED_KAFKA_DIR")
    if given and nodes == 1 and (pathlib.Path(given) / "bootstrap").exists():
        k = LocalKafka(pathlib.Path(given), owned=False)
        k.bootstrap = (k.dir / "bootstrap").read_text().strip()
        return k
    k = LocalKafka(tmp_path_factory.mktemp(name) / "state", owned=True)
    k.start(nodes)
    return k


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory):
    k = _start(tmp_path_factory, "kafka", 1)
    yield k
    k.clean()


@pytest.fixture(scope="module")
def kafka_cluster(tmp_path_factory):
    k = _start(tmp_path_factory, "kafka-cluster", 3)
    yield k
    k.clean()


def confluent():
    """The confluent_kafka module (python/requirements-dev.txt), or a skip/fail."""
    try:
        import confluent_kafka
    except ImportError:
        missing("the package 'confluent-kafka' is not installed (python/requirements-dev.txt)")
    return confluent_kafka


def create_topic(bootstrap: str, topic: str, partitions: int, config: dict | None = None, replication=1):
    confluent()
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": bootstrap})
    fs = admin.create_topics([NewTopic(topic, partitions, replication, config=config or {})])
    fs[topic].result(timeout=30)
    # Wait until the topic's metadata lists every partition with a leader.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        md = admin.list_topics(topic, timeout=10).topics.get(topic)
        if md and md.error is None and len(md.partitions) == partitions and \
                all(p.leader >= 0 for p in md.partitions.values()):
            return
        time.sleep(0.1)
    raise AssertionError(f"topic {topic} has no leaders after 30 s")
