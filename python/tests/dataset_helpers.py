"""Topics for dataset tests: made with the tokenfeed program from generated text."""

from __future__ import annotations

import pathlib
import random

from cli_helpers import deepseek, run, write_jsonl

WORDS = ["alpha", "beta", "gamma", "数据", "管道", "テキスト", "한국어", "données", "1234", "x=y+1;", "\n"]


def make_topic(tmp: pathlib.Path, name: str, docs: int = 3000, partitions: int = 3, seed: int = 1) -> str:
    rng = random.Random(seed)
    texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 120))) + f" #{seed}.{i}" for i in range(docs)]
    src = tmp / f"{name}-in"
    src.mkdir()
    write_jsonl(src / "docs.jsonl", texts)
    uri = f"log:{tmp}/{name}"
    run("ingest", "--tokenizer", deepseek(), "--input", src, "--to", uri, "--partitions", partitions,
        "--add-eos", "--progress", "never")
    return uri
