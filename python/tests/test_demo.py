"""The training demo of scripts/main.sh: it trains on a topic, and the picture
it leaves (the loss and the per-step data wait) is a real PNG with one point
per step."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zlib

from cli_helpers import deepseek, run
from conftest import ROOT


def demo_topic(tmp_path) -> str:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"text": f"document {i}: " + "words and more words " * (i % 40 + 5)}) + "\n"
                              for i in range(400)))
    uri = f"log:{tmp_path}/topics/demo"
    run("ingest", "--tokenizer", deepseek(), "--input", corpus, "--to", uri, "--partitions", "2", "--add-eos")
    return uri


def test_demo_trains_and_draws_the_loss_and_the_data_wait(tmp_path):
    uri = demo_topic(tmp_path)
    png = tmp_path / "training.png"
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "train_demo.py"), "--uri", uri, "--seconds", "4",
                        "--plot", str(png)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"plot: {png}" in r.stdout, r.stdout[-2000:]
    assert r.stdout.rstrip().splitlines()[-1] == f"plot: {png}"  # the last thing the demo says
    width, height, pixels = read_png(png.read_bytes())
    assert width >= 600 and height >= 400, (width, height)
    # A drawing, not a blank canvas: many distinct pixel rows.
    assert len(set(pixels)) > height // 4


def read_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """Checks the PNG's signature, chunk order and every chunk's CRC, and that
    the image data inflates to exactly the rows its header announces; returns
    the width, the height and the filtered rows."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, kinds, idat = 8, [], b""
    while pos < len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        crc = int.from_bytes(data[pos + 8 + length:pos + 12 + length], "big")
        assert zlib.crc32(kind + body) == crc, f"bad CRC in chunk {kind!r}"
        kinds.append(kind)
        if kind == b"IHDR":
            width, height = int.from_bytes(body[0:4], "big"), int.from_bytes(body[4:8], "big")
            bit_depth, colour_type = body[8], body[9]
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND" and b"IDAT" in kinds, kinds
    assert bit_depth == 8 and colour_type in (2, 6), (bit_depth, colour_type)  # RGB or RGBA
    row = 1 + width * (3 if colour_type == 2 else 4)  # a filter byte, then the pixels
    raw = zlib.decompress(idat)
    assert len(raw) == height * row
    return width, height, [raw[i * row:(i + 1) * row] for i in range(height)]


def test_without_matplotlib_the_demo_says_what_is_missing(tmp_path):
    uri = demo_topic(tmp_path)
    blocked = tmp_path / "blocked" / "matplotlib"
    blocked.mkdir(parents=True)
    (blocked / "__init__.py").write_text("raise ImportError('no matplotlib here')\n")
    path = [str(blocked.parent)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    png = tmp_path / "training.png"
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "train_demo.py"), "--uri", uri, "--seconds", "1",
                        "--plot", str(png)], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode != 0 and f"cannot draw {png}: matplotlib is missing" in r.stderr, r.stderr[-2000:]
    assert "Traceback" not in r.stderr and not png.exists()
