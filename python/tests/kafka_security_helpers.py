"""A secured Kafka broker for the Python tests: `scripts/kafka-local start
--security sasl_ssl` (SCRAM-SHA-512 over TLS for clients, TLS with client
certificates between brokers, the StandardAuthorizer) in a private directory.

`secured_broker` (module fixture) starts one node and stops it after the
module. Users and ACLs are made with the administrator's settings that
kafka-local writes (`admin.properties`, TLS with the admin certificate).
"""

from __future__ import annotations

import os
import pathlib
import secrets
import shutil
import subprocess

import pytest

from conftest import missing
from kafka_helpers import KAFKA_LOCAL, LocalKafka, confluent


def read_properties(path: pathlib.Path) -> dict[str, str]:
    out = {}
    for line in pathlib.Path(path).read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip()
    return out


class SecuredKafka(LocalKafka):
    def __init__(self, state_dir: pathlib.Path):
        super().__init__(state_dir, owned=True)
        self.env = dict(os.environ, TOKENFEED_KAFKA_HEAP=os.environ.get("TOKENFEED_KAFKA_HEAP", "256m"))

    def run(self, *args, timeout=180, check=True) -> subprocess.CompletedProcess:
        r = subprocess.run([str(KAFKA_LOCAL), "--dir", str(self.dir), *map(str, args)], capture_output=True,
                           text=True, timeout=timeout, env=self.env)
        if check and r.returncode != 0:
            raise AssertionError(f"kafka-local {' '.join(map(str, args))} failed ({r.returncode}):\n{r.stderr}")
        return r

    def start_secured(self):
        r = self.run("start", "--security", "sasl_ssl", check=False)
        if r.returncode != 0:
            missing(f"could not start a secured Kafka broker with scripts/kafka-local (Java 17, openssl and the "
                    f"jars from scripts/fetch-kafka.sh are needed):\n{r.stderr[-2000:]}")
        self.bootstrap = r.stdout.strip().splitlines()[-1].removeprefix("bootstrap=")
        self.outputs = [r.stdout, r.stderr]

    def admin_config(self) -> dict[str, str]:
        return read_properties(self.dir / "admin.properties")

    def client_config(self, user: str, password: str) -> dict[str, str]:
        return dict(read_properties(self.dir / "client.properties"), **{"sasl.username": user,
                                                                        "sasl.password": password})

    def admin(self):
        """One administrator client, kept: a client destroyed while a
        request is out fails that request."""
        if getattr(self, "_admin", None) is None:
            confluent()
            from confluent_kafka.admin import AdminClient
            self._admin = AdminClient(self.admin_config())
        return self._admin

    def add_user(self, name: str) -> str:
        """A SCRAM-SHA-512 user with a fresh random password (returned)."""
        from confluent_kafka.admin import ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion
        password = "pw-" + secrets.token_urlsafe(18)
        up = UserScramCredentialUpsertion(name, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096),
                                          password.encode())
        for f in self.admin().alter_user_scram_credentials([up]).values():
            f.result(timeout=30)
        return password

    def allow(self, user: str, resource: str, name: str, prefixed=True, operation="ALL"):
        """ALLOW `operation` on a topic, group, transactional_id or cluster resource."""
        from confluent_kafka.admin import AclBinding, AclOperation, AclPermissionType, ResourcePatternType, \
            ResourceType
        b = AclBinding(getattr(ResourceType, resource.upper()), name,
                       ResourcePatternType.PREFIXED if prefixed else ResourcePatternType.LITERAL, f"User:{user}", "*",
                       getattr(AclOperation, operation), AclPermissionType.ALLOW)
        for f in self.admin().create_acls([b]).values():
            f.result(timeout=30)

    def secret_files(self) -> list[pathlib.Path]:
        return sorted(p for p in (self.dir / "tls").iterdir() if p.suffix in (".key", ".password"))


@pytest.fixture(scope="module")
def secured_broker(tmp_path_factory):
    if shutil.which("java") is None and not os.environ.get("TOKENFEED_KAFKA_JAVA"):
        missing("no java binary: the Kafka tests need Java 17 to run a broker")
    if shutil.which("openssl") is None:
        missing("no openssl binary: the secured broker's certificates are made with it (Debian package openssl)")
    k = SecuredKafka(tmp_path_factory.mktemp("kafka-secured") / "state")
    try:
        k.start_secured()
        yield k
    finally:
        k.clean()
