"""Running the tokenfeed program in tests: where it is, and its JSON output."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess

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
