"""The training demo of scripts/main.sh: it trains on a topic, and the picture
it leaves (the loss and the per-step data wait) is a real PNG with one point
per step."""

from __future__ import annotations

import json
import subprocess
import sys

from cli_helpers import deepseek, run
from conftest import ROOT


def test_demo_trains_and_draws_the_loss_and_the_data_wait(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"text": f"document {i}: " + "words and more words " * (i % 40 + 5)}) + "\n"
                              for i in range(400)))
    uri = f"log:{tmp_path}/topics/demo"
    run("ingest", "--tokenizer", deepseek(), "--input", corpus, "--to", uri, "--partitions", "2", "--add-eos")
    png = tmp_path / "training.png"
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "train_demo.py"), "--uri", uri, "--seconds", "4",
                        "--plot", str(png)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"plot: {png}" in r.stdout, r.stdout[-2000:]
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width >= 600 and height >= 400, (width, height)
