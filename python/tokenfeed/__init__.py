"""tokenfeed: tokens for language-model training, from an embedded log or Kafka.

The native core lives in ``tokenfeed._ext``; this package is its public face.

Errors: every exception tokenfeed raises is a ``TokenfeedError`` and also the
built-in one to expect (``NotFoundError`` is a ``FileNotFoundError``,
``InvalidArgumentError`` a ``ValueError``, ``TimedOutError`` a ``TimeoutError``,
...); a wrong type of argument is a plain ``TypeError``. ``IterationError`` (also
a ``RuntimeError``) is the one raised in Python itself: a ``TokenDataset``
iterated in a way that would split its one stream.
"""

from tokenfeed._ext import (
    AbortedError,
    AlreadyExistsError,
    BusyError,
    CorruptionError,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    ResourceExhaustedError,
    StorageError,
    TimedOutError,
    Tokenizer,
    TokenfeedError,
    UnavailableError,
    UnsupportedError,
    __version__,
)
from tokenfeed._ingest import IngestStats, ingest


class IterationError(TokenfeedError, RuntimeError):
    """A TokenDataset iterated so that two readers would share its one stream: an
    iterator older than the newest, or DataLoader worker processes (also a
    RuntimeError)."""


__all__ = [
    "AbortedError",
    "AlreadyExistsError",
    "Batch",
    "BusyError",
    "CorruptionError",
    "InternalError",
    "IngestStats",
    "InvalidArgumentError",
    "IterationError",
    "NotFoundError",
    "ResourceExhaustedError",
    "StorageError",
    "TimedOutError",
    "TokenDataset",
    "Tokenizer",
    "TokenfeedError",
    "UnavailableError",
    "UnsupportedError",
    "__version__",
    "ingest",
    "kafka_statistics",
    "merge_states",
    "seen",
]


def kafka_statistics(clear: bool = False) -> dict:
    """The latest statistics report of each Kafka client of this process.

    Clients report only when their properties set ``statistics.interval.ms``
    (e.g. ``TokenDataset(..., kafka_properties={"statistics.interval.ms": 500})``),
    every that many milliseconds; a report is librdkafka's statistics JSON,
    parsed (per broker, ``brokers[name]["rxbytes"]`` is what the client received
    from it). Returns ``{"clients": {name: report}, "dropped": n}``: a closed
    client's last report is kept (what it fetched up to one interval before it
    closed), and past 4096 clients the one that reported least recently is
    dropped and counted. ``clear=True`` forgets them all after reading.
    """
    import json

    from tokenfeed import _ext

    reports, dropped = _ext._kafka_statistics(clear)
    return {"clients": {name: json.loads(text) for name, text in reports}, "dropped": dropped}


def __getattr__(name: str):
    # TokenDataset needs torch; import it only when asked for.
    if name in ("TokenDataset", "Batch", "merge_states", "seen"):
        from tokenfeed import dataset

        return getattr(dataset, name)
    raise AttributeError(f"module 'tokenfeed' has no attribute {name!r}")
