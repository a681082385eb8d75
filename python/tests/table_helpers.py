"""Corpus fixtures shared by the table-input tests (Parquet, Arrow IPC, S3):
multilingual texts from a seed, and FineWeb-style tables of them."""

from __future__ import annotations

import random

try:  # the tests that use tables fail without it under TOKENFEED_REQUIRE_REFERENCE=1 (conftest.missing)
    import pyarrow as pa
except ImportError:  # pragma: no cover
    pa = None

WORDS = ["alpha", "beta", "数据", "管道", "テキスト", "한국어", "données", "🙂", "1234", "x=y+1;"]


def texts_for(n, seed, newlines=True):
    """n documents of 1-60 words from WORDS (and line breaks, unless
    newlines=False), each ending in its index."""
    rng = random.Random(seed)
    words = WORDS + (["\n"] if newlines else [])
    return [" ".join(rng.choice(words) for _ in range(rng.randint(1, 60))) + f" #{i}" for i in range(n)]


def fineweb_table(texts, start_id=0):
    """A table with FineWeb's columns, `texts` in its text column."""
    n = len(texts)
    return pa.table({
        "text": pa.array(texts, pa.string()),
        "id": [f"<urn:uuid:{start_id + i:08x}>" for i in range(n)],
        "dump": ["CC-MAIN-2024-10"] * n,
        "url": [f"https://example.org/{start_id + i}" for i in range(n)],
        "date": ["2024-02-21T10:00:00Z"] * n,
        "file_path": ["s3://commoncrawl/crawl-data/x.warc.gz"] * n,
        "language": ["en"] * n,
        "language_score": [0.9] * n,
        "token_count": pa.array(range(start_id, start_id + n), pa.int64()),
    })
