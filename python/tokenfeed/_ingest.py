"""tokenfeed.ingest: a corpus, or documents from Python, into a topic of token
records: what ``tokenfeed ingest`` does, as a function that returns the
statistics."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, TypedDict, Union

from tokenfeed import InvalidArgumentError, StorageError, _ext

if TYPE_CHECKING:
    from typing_extensions import NotRequired, Unpack

# The last: any object with __arrow_c_stream__ (a pyarrow Table or
# RecordBatchReader, a polars or DuckDB result), the text in its field= column.
Source = Union[str, "os.PathLike[str]", Iterable[str], Iterable["os.PathLike[str]"], Any]


class IngestOptions(TypedDict, total=False):
    """The keyword options of ``ingest``: the command-line options of
    ``tokenfeed ingest`` with underscores (defaults: ``_ext._ingest_defaults()``,
    which are ``tokenfeed::ingest::IngestOptions``')."""

    threads: int
    partitions: int
    partition_by: str  # "round-robin" or "hash"
    shard: str  # "I/N"
    add_bos: bool
    add_eos: bool
    keep_special_tokens: bool
    format: str  # "auto", "jsonl", "text", "parquet" or "arrow" (files only)
    text_mode: str  # "line", "paragraph" or "file" (files only)
    field: str  # files and Arrow streams
    utf8: str  # "replace" or "reject"
    max_doc_bytes: int
    min_chars: int
    max_chars: int
    min_bytes: int
    max_bytes: int
    dedup: bool
    drop_controls: bool
    normalize_newlines: bool
    trim: bool
    rejects: str
    strict: bool
    stats_json: str
    batch_bytes: int
    progress: str  # "auto", "always" or "never"
    fsync: str  # "each-batch", "interval" or "none"
    create_if_missing: bool


class IngestStats(TypedDict):
    """What a run did: the object ``--stats-json`` writes."""

    complete: bool
    stopped_by_strict: NotRequired[str]  # what --strict stopped at
    documents_read: int
    documents_written: int
    documents_skipped_already_in_topic: int
    documents_dropped: int
    dropped_by_reason: dict[str, int]
    tokens_written: int
    text_bytes: int
    record_bytes: int
    files: int
    incomplete_files: list[str]
    recovered: list[str]
    resumed: bool
    resumed_from_sequence: int
    seconds: float


_FILE_ONLY = ("format", "text_mode", "field")


def ingest(source: Source, *, to: str, tokenizer: str | os.PathLike[str],
           **options: Unpack[IngestOptions]) -> IngestStats:
    """Reads, cleans and tokenizes ``source`` into the topic ``to`` (``log:DIR/TOPIC``
    or ``kafka://HOST:PORT/TOPIC``) with the tokenizer file ``tokenizer``, exactly as
    ``tokenfeed ingest`` does, and returns the statistics.

    ``source`` is a file, directory or glob (a ``str`` or ``os.PathLike``), a list
    of ``os.PathLike`` (several of them), or any other iterable of ``str``: the
    documents themselves, one per item, read lazily. Note that a list of ``str``
    is documents, not paths: name several files with ``pathlib.Path`` objects, a
    directory or a glob.

    ``source`` may also be any object that exports an Arrow C stream
    (``__arrow_c_stream__``: a ``pyarrow.Table`` or ``RecordBatchReader``, a polars
    DataFrame, a DuckDB result): one document per row, the text from the string
    column ``field`` (default ``"text"``; a column name, or a dotted path into
    struct columns), other columns ignored, a null text a ``missing_field`` drop.
    The stream's capsule goes to the native ingest, which reads the texts in
    place in the batches (no spool file, no pyarrow needed: polars alone works); its
    records name the source ``arrow-stream`` and the row (line: row index + 1).
    A stream cannot be read again, so such a run cannot be resumed: a second call
    to the same topic is refused as another ingest's. A batch the producer
    fails to give (a generator behind a ``RecordBatchReader`` raising) or a
    malformed one ends the reading like a damaged file: ``StorageError`` with
    ``.stats``, what came before written.

    Documents given as ``str`` are written to a temporary JSONL file first, which
    the records then name as their source; such a run cannot be resumed (a second
    call writes another run, which an existing topic refuses as another ingest's).

    Errors are raised as the command reports them: ``InvalidArgumentError`` for a
    bad option or an input that is not text (then nothing is written), a missing
    input is ``NotFoundError``, and so on. A run that ended but refused input
    raises too, with the statistics as ``.stats``: ``InvalidArgumentError`` when
    ``strict=True`` stopped it at a dropped document, ``StorageError`` when an
    input could not be read to the end (in both cases what came before was
    written). ``KeyboardInterrupt`` stops the run with the topic consistent; the
    same call on the same files resumes it. A run from an Arrow stream cannot be
    resumed: write the rows it did not reach to a new topic.
    """
    to, tokenizer = _text_argument(to, "to"), os.fspath(tokenizer)
    if isinstance(source, (str, os.PathLike)):
        return _run([os.fspath(source)], to, tokenizer, options)
    if isinstance(source, (bytes, bytearray)):
        raise TypeError("source must be a path, a glob, or an iterable of str documents, not bytes")
    if isinstance(source, (list, tuple)) and source and isinstance(source[0], os.PathLike):
        bad = [i for i, p in enumerate(source) if not isinstance(p, os.PathLike)]
        if bad:
            raise TypeError(f"source[{bad[0]}] is {type(source[bad[0]]).__name__}, but source[0] is a path: "
                            "give paths alone (os.PathLike), or documents alone (str)")
        return _run([os.fspath(p) for p in source], to, tokenizer, options)
    if hasattr(source, "__arrow_c_stream__") and not isinstance(source, type):
        return _ingest_arrow_stream(source, to, tokenizer, options)
    if not isinstance(source, Iterable):
        raise TypeError(f"source must be a path, a glob, or an iterable of str documents, not "
                        f"{type(source).__name__}")
    given = [k for k in _FILE_ONLY if k in options]
    if given:
        raise TypeError(f"{given[0]}= applies to files; documents given as str are read as they are")
    with tempfile.TemporaryDirectory(prefix="tokenfeed-ingest-") as spool:
        path = os.path.join(spool, "documents.jsonl")
        # surrogatepass: a str with lone surrogates reaches the reader as the
        # invalid UTF-8 it stands for, for the utf8= policy to handle.
        with open(path, "w", encoding="utf-8", errors="surrogatepass") as f:
            for i, doc in enumerate(source):
                if not isinstance(doc, str):
                    raise TypeError(f"document {i} of source is {type(doc).__name__}, not str")
                f.write(json.dumps({"text": doc}, ensure_ascii=False))
                f.write("\n")
        return _run([path], to, tokenizer, {**options, "format": "jsonl"})


def _ingest_arrow_stream(source: Any, to: str, tokenizer: str, options: dict[str, Any]) -> IngestStats:
    given = [k for k in ("format", "text_mode") if k in options]
    if given:
        raise TypeError(f"{given[0]}= applies to files; an Arrow stream is read row by row")
    # The capsule hands the stream itself to the native ingest, which reads the
    # batches in place: no pyarrow needed, nothing copied here.
    capsule = source.__arrow_c_stream__()
    return _checked(json.loads(_ext._ingest_arrow_stream(capsule, to, tokenizer, _paths_as_str(options))),
                    stream=True)


def _text_argument(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    return value


def _paths_as_str(options: dict[str, Any]) -> dict[str, Any]:
    for key in ("rejects", "stats_json"):
        if key in options and isinstance(options[key], os.PathLike):
            options = {**options, key: os.fspath(options[key])}
    return options


def _run(inputs: list[str], to: str, tokenizer: str, options: dict[str, Any]) -> IngestStats:
    return _checked(json.loads(_ext._ingest(inputs, to, tokenizer, _paths_as_str(options))))


def _checked(stats: IngestStats, stream: bool = False) -> IngestStats:
    """The statistics of a run that ended; raised with them as ``.stats`` when
    it refused input (strict=True stopped it, an input was not read to the end).
    ``stream``: the run read an Arrow stream, which cannot be resumed."""
    failure: Exception | None = None
    if "stopped_by_strict" in stats:
        then = ("an Arrow stream cannot be resumed: write its remaining rows, fixed or with strict=False, to a "
                "new topic" if stream else "fix the input, or drop strict=True, and call again to resume")
        failure = InvalidArgumentError(f"{stats['stopped_by_strict']}; the documents before it were written ({then})")
    elif stats["incomplete_files"] and stream:
        failure = StorageError("the Arrow stream could not be read to the end: " + "; ".join(stats["incomplete_files"])
                               + "; the rows before it were written (a stream cannot be resumed: write its "
                               "remaining rows to a new topic)")
    elif stats["incomplete_files"]:
        failure = StorageError(f"{len(stats['incomplete_files'])} input file(s) could not be read to the end: "
                               + "; ".join(stats["incomplete_files"]) + "; everything before the damage was written")
    if failure is not None:
        failure.stats = stats  # type: ignore[attr-defined]
        raise failure
    return stats
