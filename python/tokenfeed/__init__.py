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
    "merge_states",
    "seen",
]


def __getattr__(name: str):
    # TokenDataset needs torch; import it only when asked for.
    if name in ("TokenDataset", "Batch", "merge_states", "seen"):
        from tokenfeed import dataset

        return getattr(dataset, name)
    raise AttributeError(f"module 'tokenfeed' has no attribute {name!r}")
