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
    field: str  # files only
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
    It is read batch by batch through the Arrow C stream interface (pyarrow must
    be installed) and spooled like documents given as ``str``.

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
    same call on the same files resumes it.
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


def _arrow_text_column(batch: Any, field: str, pa: Any) -> Any:
    """The string array of ``field`` in one record batch: a column of that
    name first (dots allowed), else a dotted path into struct columns."""
    names = batch.schema.names
    if field in names:
        column = batch.column(field)
        where = field
    else:
        parts = field.split(".")
        if parts[0] not in names:
            raise InvalidArgumentError(f"the Arrow stream has no column '{field}' (its columns: "
                                       f"{', '.join(names) or 'none'}); give the text column with field=")
        column, where = batch.column(parts[0]), parts[0]
        for part in parts[1:]:
            if not pa.types.is_struct(column.type):
                raise InvalidArgumentError(f"the Arrow stream's column '{field}': '{where}' is {column.type}, "
                                           f"not a struct with a field '{part}'")
            if column.type.get_field_index(part) < 0:
                raise InvalidArgumentError(
                    f"the Arrow stream has no column '{field}' ('{where}' has the fields: "
                    f"{', '.join(column.type.field(i).name for i in range(column.type.num_fields))})")
            # flatten(): a null struct makes its fields null too.
            column = column.flatten()[column.type.get_field_index(part)]
            where += "." + part
    if pa.types.is_dictionary(column.type) and _is_string(column.type.value_type, pa):
        column = column.cast(column.type.value_type)
    if not _is_string(column.type, pa):
        raise InvalidArgumentError(f"the Arrow stream's column '{field}' is {column.type}, not a string column; "
                                   "give the text column with field=")
    return column


def _is_string(t: Any, pa: Any) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t) or getattr(pa.types, "is_string_view",
                                                                             lambda _: False)(t)


def _ingest_arrow_stream(source: Any, to: str, tokenizer: str, options: dict[str, Any]) -> IngestStats:
    try:
        import pyarrow as pa
    except ImportError:
        raise TypeError("an Arrow stream source (__arrow_c_stream__) needs pyarrow: pip install pyarrow") from None
    field = _text_argument(options.get("field", "text"), "field")
    given = [k for k in ("format", "text_mode") if k in options]
    if given:
        raise TypeError(f"{given[0]}= applies to files; an Arrow stream is read row by row")
    reader = pa.RecordBatchReader.from_stream(source)
    with tempfile.TemporaryDirectory(prefix="tokenfeed-ingest-") as spool:
        path = os.path.join(spool, "documents.jsonl")
        with open(path, "w", encoding="utf-8", errors="surrogatepass") as f:
            for batch in reader:
                for text in _arrow_text_column(batch, field, pa).to_pylist():
                    # A null text: an object without the field, a missing_field drop.
                    f.write("{}" if text is None else json.dumps({"text": text}, ensure_ascii=False))
                    f.write("\n")
        rest = {k: v for k, v in options.items() if k != "field"}
        return _run([path], to, tokenizer, {**rest, "format": "jsonl"})


def _text_argument(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    return value


def _run(inputs: list[str], to: str, tokenizer: str, options: dict[str, Any]) -> IngestStats:
    for key in ("rejects", "stats_json"):
        if key in options and isinstance(options[key], os.PathLike):
            options = {**options, key: os.fspath(options[key])}
    stats: IngestStats = json.loads(_ext._ingest(inputs, to, tokenizer, options))
    failure: Exception | None = None
    if "stopped_by_strict" in stats:
        failure = InvalidArgumentError(f"{stats['stopped_by_strict']}; the documents before it were written (fix "
                                       "the input, or drop strict=True, and call again to resume)")
    elif stats["incomplete_files"]:
        failure = StorageError(f"{len(stats['incomplete_files'])} input file(s) could not be read to the end: "
                               + "; ".join(stats["incomplete_files"]) + "; everything before the damage was written")
    if failure is not None:
        failure.stats = stats  # type: ignore[attr-defined]
        raise failure
    return stats
