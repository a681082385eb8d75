"""Running the tokenfeed program in tests: where it is, and its JSON output."""

from __future__ import annotations

import json
import os
import pathlib
import random
import signal
import subprocess
import time

import pytest

from conftest import ROOT, missing, tokenizer_path


def cli() -> str:
    path = os.environ.get("TOKENFEED_CLI", str(ROOT / "build" / "release" / "src" / "cli" / "tokenfeed"))
    if not os.access(path, os.X_OK):
        missing(f"the tokenfeed program is not built at {path} (scripts/build.sh)")
    return path


def deepseek() -> str:
    p = tokenizer_path("deepseek_v3")
    if not p.exists():
        missing(f"tokenizer file {p} is missing")
    return str(p)


def run(*args, check=True, timeout=300, **kw) -> subprocess.CompletedProcess:
    r = subprocess.run([cli(), *map(str, args)], capture_output=True, text=True, timeout=timeout, **kw)
    if check and r.returncode != 0:
        raise AssertionError(f"tokenfeed {' '.join(map(str, args))} failed ({r.returncode}):\n{r.stderr}")
    return r


def records(uri: str) -> list[dict]:
    """Every record of a topic, in partition and offset order."""
    out = run("inspect", uri, "--json").stdout
    return [json.loads(line) for line in out.splitlines()]


def write_jsonl(path: pathlib.Path, texts) -> pathlib.Path:
    with open(path, "w", encoding="utf-8") as f:
        for t in texts:
            f.write(json.dumps({"text": t}, ensure_ascii=False) + "\n")
    return path


def topic_records(uri: str) -> int:
    """How many records the topic holds now (0 while it does not exist yet)."""
    r = run("topics", uri, "--json", check=False)
    return json.loads(r.stdout)["records"] if r.returncode == 0 else 0


def run_killed_until_done(args: list[str], uri: str, total: int, rng: random.Random, kills: int,
                          share: tuple[float, float]) -> int:
    """Runs the command `args` (an ingest into `uri`) up to `kills` times, SIGKILLing each run once the
    topic holds a random share (`share`) of `total` records, so mid-run whatever the machine's speed;
    then lets one more run finish, which must succeed. Returns how many runs were killed."""
    killed = 0
    for attempt in range(kills + 1):  # bounded: kill up to `kills` times, then let it finish
        p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if attempt < kills:
            target = rng.uniform(*share) * total
            deadline = time.monotonic() + 120
            while p.poll() is None and time.monotonic() < deadline:
                if topic_records(uri) >= target:
                    p.send_signal(signal.SIGKILL)
                    killed += 1
                    break
                time.sleep(0.005)
        _, err = p.communicate(timeout=300)
        if p.returncode == 0:
            return killed
        assert p.returncode == -signal.SIGKILL, err.decode()
    raise AssertionError(f"the last run of {args[1]} did not finish")
