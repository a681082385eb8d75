"""Shared fixtures: the tokenizer files, the reference tokenizer, test text.

The test command (scripts/test.sh) sets TOKENFEED_REQUIRE_REFERENCE=1: then a
missing tokenizer file or reference package fails the test instead of
skipping it, so CI never reports a skipped comparison as a pass.
"""

from __future__ import annotations

import json
import os
import pathlib
import random

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
# Byte-level BPE with hand-written scanners, then SentencePiece-style BPE
# (character level, byte fallback; Llama-2 without a pre-tokenizer).
VOCABULARIES = ["deepseek_v3", "llama3", "qwen3", "llama2", "gemma3"]


def pytest_configure(config):
    config.addinivalue_line("markers", "kafka: needs a real Kafka broker (started by the kafka_broker fixture)")
    config.addinivalue_line("markers", "kafka_cluster: needs a three-node Kafka cluster (kafka_cluster fixture)")


def _required() -> bool:
    return os.environ.get("TOKENFEED_REQUIRE_REFERENCE") == "1"


def missing(what: str):
    if _required():
        pytest.fail(f"{what} (TOKENFEED_REQUIRE_REFERENCE=1; run scripts/setup.sh)")
    pytest.skip(what)


def tokenizer_path(name: str) -> pathlib.Path:
    base = os.environ.get("TOKENFEED_TOKENIZERS_DIR", str(ROOT / ".cache" / "tokenizers"))
    return pathlib.Path(base) / name / "tokenizer.json"


@pytest.fixture(scope="session", params=VOCABULARIES)
def vocab(request) -> str:
    return request.param


@pytest.fixture(scope="session")
def tokenizer_file(vocab) -> pathlib.Path:
    path = tokenizer_path(vocab)
    if not path.exists():
        missing(f"tokenizer file {path} is missing")
    return path


@pytest.fixture(scope="session")
def reference(tokenizer_file):
    try:
        from tokenizers import Tokenizer
    except ImportError:
        missing("the reference package 'tokenizers' is not installed")
    ref = Tokenizer.from_file(str(tokenizer_file))
    ref.no_truncation()
    ref.no_padding()
    return ref


@pytest.fixture(scope="session")
def ours(tokenizer_file):
    import tokenfeed

    return tokenfeed.Tokenizer.from_file(str(tokenizer_file))


def _corpus_dir() -> pathlib.Path | None:
    env = os.environ.get("TOKENFEED_CORPUS_DIR")
    candidates = [pathlib.Path(env)] if env else [ROOT.parent / "shared" / "corpus"]
    for c in candidates:
        if c.is_dir() and any(c.glob("*.jsonl")):
            return c
    return None


def _faker_documents() -> list[str]:
    """Multilingual text from Faker's locale word lists (seeded)."""
    try:
        from faker import Faker
    except ImportError:
        missing("no corpus directory and the package 'Faker' is not installed")
    locales = ["en_US", "de_DE", "fr_FR", "es_ES", "ru_RU", "ar_AA", "hi_IN", "ja_JP", "ko_KR",
               "zh_CN", "zh_TW", "el_GR", "he_IL", "th_TH", "tr_TR", "uk_UA", "vi_VN", "pl_PL"]
    docs = []
    rng = random.Random(7)
    for loc in locales:
        fake = Faker(loc)
        fake.seed_instance(11)
        for _ in range(60):
            parts = [fake.paragraph(nb_sentences=rng.randint(1, 6)), fake.address(), fake.name(),
                     str(rng.randint(0, 10**9)), fake.date(), fake.url()]
            rng.shuffle(parts)
            docs.append(rng.choice([" ", "\n", "\n\n", "  "]).join(parts))
    return docs


@pytest.fixture(scope="session")
def documents() -> tuple[str, list[str]]:
    """(origin, texts): the corpus when present, otherwise Faker text."""
    d = _corpus_dir()
    if d is None:
        return "faker", _faker_documents()
    texts = []
    for f in sorted(d.glob("*.jsonl")):
        with open(f, encoding="utf-8") as fh:
            for line in fh:
                texts.append(json.loads(line)["text"])
    return str(d), texts


# The Kafka broker fixtures, defined once here so that every module shares one
# broker per session.
from kafka_helpers import kafka_broker, kafka_cluster  # noqa: E402,F401
