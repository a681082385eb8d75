"""The loader's Prometheus endpoint (metrics_port=): its exposition, and a real Prometheus server scraping it.

The server is Debian's `prometheus` (scripts/install-deps.sh), started by the
test on loopback with its own data directory and stopped at the end; every
wait is bounded.
"""

from __future__ import annotations

import gc
import json
import re
import shutil
import subprocess
import time
import urllib.parse
import urllib.request

import pytest

import tokenfeed
from conftest import missing
from dataset_helpers import make_topic
from ports import free_port


@pytest.fixture(scope="module")
def topic(tmp_path_factory):
    return make_topic(tmp_path_factory.mktemp("prom"), "t", docs=400, partitions=2)


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        return r.read().decode()


def samples(text: str) -> dict[str, float]:
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            out[name] = float(value)
    return out


def test_the_endpoint_serves_the_loaders_metrics(topic):
    ds = tokenfeed.TokenDataset(topic, seq_len=64, batch_size=2, seed=1, bos_id=0, metrics_port=0, rank=0,
                                world_size=1)
    port = ds.metrics_port
    assert isinstance(port, int) and port > 0
    batches = [b for _, b in zip(range(7), ds)]
    text = scrape(port)
    s = samples(text)
    assert s['tokenfeed_loader_tokens_total{rank="0"}'] == sum(b["tokens"] for b in batches) == 7 * 2 * 64
    assert s['tokenfeed_loader_batches_total{rank="0"}'] == 7
    assert s['tokenfeed_loader_data_wait_seconds_count{rank="0"}'] == 7
    assert s['tokenfeed_loader_data_wait_seconds_bucket{rank="0",le="+Inf"}'] == 7
    assert "# TYPE tokenfeed_loader_data_wait_seconds histogram" in text
    assert s['tokenfeed_loader_prefetch_capacity_batches{rank="0"}'] == 4
    assert {f'tokenfeed_loader_partition_lag_records{{rank="0",source="{topic}",partition="{p}"}}'
            for p in (0, 1)} <= s.keys()
    m = ds.metrics()
    for e in m["consumed"]:
        key = f'{{rank="0",source="{topic}",epoch="{e["epoch"]}"}}'
        assert s["tokenfeed_loader_source_tokens_total" + key] == e["tokens"]
        assert s["tokenfeed_loader_source_documents_total" + key] == e["documents"]
    assert sum(e["tokens"] for e in m["consumed"]) == 7 * 2 * 64
    # Counters and units as Prometheus names them.
    for name in re.findall(r"^# TYPE (\S+) counter$", text, re.M):
        assert name.endswith("_total"), name
    # Only GET /metrics is served.
    with pytest.raises(urllib.error.HTTPError, match="404"):
        urllib.request.urlopen(f"http://127.0.0.1:{port}/other", timeout=5)
    # Loopback by default; a busy port or a bad address is a clear error.
    with pytest.raises(tokenfeed.StorageError, match="cannot listen on the 'metrics endpoint 127.0.0.1:"):
        tokenfeed.TokenDataset(topic, seq_len=64, batch_size=2, metrics_port=port)
    with pytest.raises(tokenfeed.InvalidArgumentError, match="not an IPv4 address"):
        tokenfeed.TokenDataset(topic, seq_len=64, batch_size=2, metrics_port=0, metrics_address="localhost:1")
    with pytest.raises(tokenfeed.InvalidArgumentError, match="metrics_port must be between 0 and 65535"):
        tokenfeed.TokenDataset(topic, seq_len=64, batch_size=2, metrics_port=70000)
    assert tokenfeed.TokenDataset(topic, seq_len=64, batch_size=2).metrics_port is None
    del ds
    gc.collect()
    with pytest.raises(urllib.error.URLError):
        scrape(port)  # the endpoint lives as long as its loader


def query(prom_port: int, expr: str) -> list:
    url = f"http://127.0.0.1:{prom_port}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(url, timeout=5) as r:
        body = json.loads(r.read())
    assert body["status"] == "success", body
    return body["data"]["result"]


def test_a_real_prometheus_server_scrapes_two_ranks(topic, tmp_path):
    binary = shutil.which("prometheus")
    if binary is None:
        missing("the prometheus server is not installed (Debian package prometheus, scripts/install-deps.sh)")
    opts = dict(seq_len=32, batch_size=2, seed=4, epochs=0, bos_id=0, metrics_port=0)
    ranks = [tokenfeed.TokenDataset(topic, rank=r, world_size=2, **opts) for r in (0, 1)]
    its = [iter(ds) for ds in ranks]
    taken = [[next(it) for _ in range(5)] for it in its]
    targets = [f"127.0.0.1:{ds.metrics_port}" for ds in ranks]
    prom_port = free_port()
    (tmp_path / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 500ms\n"
        "scrape_configs:\n  - job_name: tokenfeed_loader\n    static_configs:\n"
        f"      - targets: {json.dumps(targets)}\n")
    log = open(tmp_path / "prometheus.log", "w")
    server = subprocess.Popen(
        [binary, f"--config.file={tmp_path / 'prometheus.yml'}", f"--storage.tsdb.path={tmp_path / 'data'}",
         f"--web.listen-address=127.0.0.1:{prom_port}"], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        expected = {str(r): sum(b["tokens"] for b in taken[r]) for r in (0, 1)}
        got = {}
        while time.monotonic() < deadline:
            assert server.poll() is None, (tmp_path / "prometheus.log").read_text()[-2000:]
            try:
                up = query(prom_port, 'up{job="tokenfeed_loader"}')
                got = {r["metric"]["rank"]: float(r["value"][1])
                       for r in query(prom_port, "tokenfeed_loader_tokens_total")}
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.3)
                continue
            if len(up) == 2 and all(u["value"][1] == "1" for u in up) and got == expected:
                break
            time.sleep(0.3)
        assert got == expected, f"prometheus saw {got}, the ranks yielded {expected}"
        # The histogram and the per-source counts arrive as Prometheus reads them.
        waits = query(prom_port, "sum by (rank) (tokenfeed_loader_data_wait_seconds_count)")
        assert {w["metric"]["rank"]: float(w["value"][1]) for w in waits} == {"0": 5.0, "1": 5.0}
        per_source = query(prom_port, "sum by (rank) (tokenfeed_loader_source_tokens_total)")
        # Unsharded, each rank's counts are the whole stream's: both ranks' rows.
        assert {w["metric"]["rank"]: float(w["value"][1]) for w in per_source} == {
            "0": sum(expected.values()), "1": sum(expected.values())}
        quantile = query(prom_port, "histogram_quantile(0.5, sum by (le) (tokenfeed_loader_data_wait_seconds_bucket))")
        assert len(quantile) == 1
        lag = query(prom_port, "count(tokenfeed_loader_partition_lag_records)")
        assert float(lag[0]["value"][1]) == 4  # two partitions, two ranks
    finally:
        server.terminate()
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=5)
        log.close()
