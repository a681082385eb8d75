"""TokenDataset: packed training batches from tokenfeed topics, for PyTorch."""

from __future__ import annotations

import inspect
import json
import numbers
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, Union

import torch
from torch.utils.data import IterableDataset

from tokenfeed import IterationError, _client_log, _ext

if TYPE_CHECKING:
    from typing_extensions import NotRequired, Unpack

Sources = Union[str, Sequence[str], Sequence[tuple[str, float]], Mapping[str, float]]


class Batch(TypedDict):
    """One batch of this rank, as ``TokenDataset`` yields it (B = batch_size, T = seq_len)."""

    input_ids: torch.Tensor  # [B, T] int64 (int32 with dtype=torch.int32): the tokens
    labels: torch.Tensor  # [B, T] int64 always: the next token, ignore_index where there is none
    position_ids: torch.Tensor  # [B, T], dtype as input_ids: position within each piece, from 0
    document_ids: torch.Tensor  # [B, T] int32: index of the piece within its row
    cu_seqlens: torch.Tensor  # [n+1] int32: piece boundaries over the flattened batch
    max_seqlen: int  # the longest piece
    attention_mask: NotRequired[torch.Tensor]  # [B, T] int8, only with pack=False: 1 token, 0 padding
    source: torch.Tensor  # [B] int32: index of the source each row came from
    step: int  # the global step (counting on across rounds)
    tokens: int  # tokens of this batch that are not padding


class LoaderOptions(TypedDict, total=False):
    """The keyword options of ``TokenDataset`` (defaults: ``tokenfeed::LoaderOptions``)."""

    seed: int
    shuffle: bool
    epochs: int
    shards: int
    follow: bool
    follow_timeout_ms: int
    pack: bool
    bos_id: int | None
    eos_id: int | None
    pad_id: int
    ignore_index: int
    cross_document_labels: bool
    block_records: int | None
    window_blocks: int
    memory_budget_bytes: int
    prefetch_batches: int
    kafka_properties: Sequence[str] | Mapping[str, str | bool | int]
    kafka_timeout_ms: int
    metrics_port: int | None
    metrics_address: str


_URI_FORMS = "a str such as 'log:DIR/TOPIC' or 'kafka://HOST:PORT/TOPIC'"


def _uri(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, os.PathLike)):
        raise TypeError(f"a source URI must be {_URI_FORMS}, not {type(value).__name__} {value!r}; "
                        "for a topic of the embedded log write f'log:{path}'")
    raise TypeError(f"a source URI must be {_URI_FORMS}, not {type(value).__name__} {value!r}")


def _weight(uri: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"the weight of {uri} must be a number, not {type(value).__name__} {value!r}")
    return float(value)


def _sources(uri: Sources) -> tuple[list[str], list[float]]:
    if isinstance(uri, str):
        return [uri], [1.0]
    if isinstance(uri, Mapping):
        pairs = list(uri.items())
    elif isinstance(uri, (bytes, os.PathLike)) or not isinstance(uri, Sequence):
        return [_uri(uri)], [1.0]  # raises
    else:
        pairs = [(item, 1.0) if not isinstance(item, tuple) else item for item in uri]
    uris, weights = [], []
    for pair in pairs:
        if len(pair) != 2:
            raise TypeError(f"a weighted source must be a (uri, weight) pair, not {pair!r}")
        u = _uri(pair[0])
        uris.append(u)
        weights.append(_weight(u, pair[1]))
    if not uris:
        raise _ext.InvalidArgumentError("no source: give a topic URI or a weighted list of them")
    return uris, weights


def _rank_and_world(rank: int | None, world_size: int | None) -> tuple[Any, Any]:
    dist = torch.distributed
    if rank is None:
        if dist.is_available() and dist.is_initialized():
            rank = dist.get_rank()
        else:
            rank = int(os.environ.get("RANK", "0"))
    if world_size is None:
        if dist.is_available() and dist.is_initialized():
            world_size = dist.get_world_size()
        else:
            world_size = int(os.environ.get("WORLD_SIZE", "1"))
    return rank, world_size


class TokenDataset(IterableDataset):
    """Batches of ``[batch_size, seq_len]`` token ids from one or more topics.

    Each item is a ``tokenfeed.Batch``: a dict of ``input_ids``, ``labels``,
    ``position_ids``, ``document_ids``, ``cu_seqlens``, ``max_seqlen``,
    ``attention_mask`` (only with ``pack=False``), ``source``, ``step`` and
    ``tokens`` (see ``Batch`` and docs/loader.md, "Batches").

    Parameters (after ``uri``, ``seq_len`` and ``batch_size``, keyword only; the
    defaults shown by ``help()`` are the native loader's own):

    - ``uri``: a ``log:DIR/TOPIC`` or ``kafka://HOST:PORT/TOPIC`` URI, a list of
      them, or a mapping (or list of pairs) from URI to weight for mixing.
      Weights are proportions of samples: {A: 7, B: 3} is {A: 0.7, B: 0.3}.
    - ``seq_len``: tokens per row (1 to 2^24). ``batch_size``: rows per batch
      of this rank (1 to 65536); ``batch_size * seq_len`` stays below 2^31.
    - ``seed``: the shuffle's seed. ``shuffle``: False reads every source in
      order.
    - ``rank``, ``world_size``: this rank's share; by default from
      torch.distributed, or RANK/WORLD_SIZE as torchrun sets them.
    - ``epochs``: the stream ends when every source has completed this many
      passes (a source that finishes first is read again, reshuffled, so the
      weights hold to the end); 0 repeats forever.
    - ``shards``: 1 (default): every rank reads every record of the sources
      (any world size). S > 1: the stream is S shards and each rank reads only
      its own (about 1/world_size of the records); world_size must divide S,
      ``epochs`` N > 0 ends after the step by which every shard has made its
      N passes (found from the topics' token index, which Kafka topics lack:
      there ``epochs`` must be 0), and ``state_dict()`` holds this rank's shards:
      each rank saves its own, and ``tokenfeed.merge_states`` joins all ranks'
      for a restart with another world size (docs/loader.md, "Shards").
    - ``follow``: True reads a live topic: records appended while training
      runs are taken too, in an order fixed by their offsets and the seed (so
      resume stays exact); a block not yet written is waited for, at most
      ``follow_timeout_ms``, then the step raises ``TimedOutError``. Needs
      ``epochs=0`` (docs/loader.md, "Live topics").
    - ``pack``: True lays documents end to end; False gives one document per
      row, truncated or padded with ``pad_id`` (the padding is a piece of its
      own, masked by ``attention_mask``).
    - ``bos_id``, ``eos_id``: ids to put before / after each document (None:
      none). ``pad_id``: the padding id. ``ignore_index``: the label where
      there is nothing to predict. ``cross_document_labels``: a document's last
      token predicts the next document's first.
    - ``dtype``: ``torch.int64`` or ``torch.int32`` for ``input_ids`` and
      ``position_ids``; ``labels`` stay int64 (as ``cross_entropy`` needs).
    - ``pin_memory``: copy each batch into pinned memory (needs CUDA).
    - ``block_records`` (0 or None: 1024 on the log, 4096 on Kafka),
      ``window_blocks``: the shuffle's block and window sizes.
    - ``memory_budget_bytes``, ``prefetch_batches``: how much the prefetch
      thread holds.
    - ``kafka_properties``: Kafka client settings, a list of ``"key=value"``
      strings or a mapping (a ``dict`` or any ``collections.abc.Mapping``) of
      str to str, bool (``"true"``/``"false"``) or int. ``kafka_timeout_ms``:
      how long one Kafka step may wait for the cluster.
    - ``metrics_port``: serve this rank's metrics for Prometheus at
      ``http://metrics_address:PORT/metrics`` (0: any free port, see
      ``metrics_port`` after creation; None, the default: no endpoint). Give
      each rank its own port, e.g. a base plus ``LOCAL_RANK``.
      ``metrics_address``: the IPv4 address to listen on, ``127.0.0.1`` (this
      machine only) by default; ``0.0.0.0`` for a scraper elsewhere
      (docs/loader.md, "Metrics").

    Bad values raise ``tokenfeed.InvalidArgumentError`` (a ``ValueError``)
    naming the parameter; numpy integers are accepted, bools are not integers.

    Iterating: one dataset is one stream. ``iter(ds)`` continues where the last
    iterator stopped (after a ``break``, or a ``load_state_dict``); once the
    stream has ended (``epochs=N``), a new ``iter(ds)`` starts the next round
    of N passes, reshuffled, so ``for epoch in range(3): for batch in ds:``
    trains three rounds. An older iterator used after a newer one was made
    raises ``tokenfeed.IterationError`` (a ``RuntimeError``).

    Every rank takes its share of one global stream whose order does not
    depend on the world size, so ``state_dict()`` taken at step k resumes
    exactly, also with another world size or batch size (sharded: with the
    states of all ranks merged, see ``shards``). Use it directly or
    with ``DataLoader(dataset, batch_size=None, num_workers=0)``: the
    prefetching happens in native threads.
    """

    def __init__(
        self,
        uri: Sources,
        seq_len: int,
        batch_size: int,
        *,
        rank: int | None = None,
        world_size: int | None = None,
        dtype: torch.dtype = torch.int64,
        pin_memory: bool = False,
        **options: Unpack[LoaderOptions],
    ) -> None:
        super().__init__()
        if dtype not in (torch.int64, torch.int32):
            raise _ext.InvalidArgumentError(f"dtype must be torch.int64 or torch.int32, not {dtype!r}")
        if not isinstance(pin_memory, bool):
            raise TypeError(f"pin_memory must be True or False, not {pin_memory!r}")
        if pin_memory and not torch.cuda.is_available():
            raise _ext.InvalidArgumentError("pin_memory=True needs a CUDA device")
        if "int32_ids" in options:
            raise TypeError("unexpected keyword argument 'int32_ids': give dtype=torch.int32")
        self.uris, self.weights = _sources(uri)
        self.rank, self.world_size = _rank_and_world(rank, world_size)
        self.seq_len, self.batch_size = seq_len, batch_size
        self.pin_memory = pin_memory
        self._options: dict[str, Any] = dict(
            options, seq_len=seq_len, batch_size=batch_size, rank=self.rank, world_size=self.world_size,
            int32_ids=dtype == torch.int32)
        try:
            snapshot = self._agreed_snapshot()
            self._native = _ext._create_loader(self.uris, self.weights, snapshot, **self._options)
        finally:
            _client_log.forward()
        self._epochs = self._options.get("epochs", _DEFAULTS["epochs"])
        self._iterations = 0

    def _agreed_snapshot(self) -> str:
        """Rank 0's view of the topics, so that all ranks build the same stream."""
        dist = torch.distributed
        if self.world_size > 1 and dist.is_available() and dist.is_initialized():
            box = [_ext._take_snapshot(self.uris, **self._options) if dist.get_rank() == 0 else None]
            dist.broadcast_object_list(box, src=0)
            return box[0]
        return ""  # one process, or ranks reading a topic that no longer grows

    def __iter__(self) -> Iterator[Batch]:
        info = torch.utils.data.get_worker_info()
        if info is not None and info.num_workers > 0:
            raise IterationError("TokenDataset prefetches in native threads: use DataLoader(..., num_workers=0)")
        self._iterations += 1
        return self._batches(self._iterations)

    def _batches(self, iteration: int) -> Iterator[Batch]:
        first = True
        while True:
            if iteration != self._iterations:
                raise IterationError("this TokenDataset is being iterated by a newer iterator: one dataset is one "
                                     "stream, continue with the newest iter(dataset)")
            try:
                batch = self._native.next()
            finally:
                _client_log.forward()
            if batch is None and first and self._epochs != 0:
                # The stream had ended before this iterator: the next round.
                self._native.start_next_round()
                try:
                    batch = self._native.next()
                finally:
                    _client_log.forward()
                if batch is None:
                    raise _ext.InvalidArgumentError(
                        f"the sources {self.uris} hold less than one global batch (batch_size {self.batch_size} x "
                        f"world_size {self.world_size} rows of seq_len {self.seq_len}) per round: lower the "
                        "sizes or raise epochs")
            if batch is None:
                return
            first = False
            yield self._to_batch(batch)

    def _to_batch(self, batch: dict[str, Any]) -> Batch:
        tokens = batch.pop("_token_arrays")  # [3, B, T], one buffer
        batch["input_ids"], batch["labels"], batch["position_ids"] = tokens[0], tokens[1], tokens[2]
        if tokens.dtype != torch.int64:
            batch["labels"] = batch["labels"].to(torch.int64)
        if self.pin_memory:
            batch = {k: (v.pin_memory() if isinstance(v, torch.Tensor) else v) for k, v in batch.items()}
        return batch  # type: ignore[return-value]

    def state_dict(self) -> dict[str, Any]:
        """The position after the last batch yielded (JSON-serialisable; a few KB)."""
        return {"tokenfeed_loader": json.loads(self._native.state())}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Continues after the batches a state_dict() had seen (before or during iteration).

        The settings named in docs/loader.md ("Exact resume") must be those the
        state was saved with; the error names the one that differs.
        """
        if isinstance(state, (str, bytes)):
            raise TypeError("load_state_dict takes the dict state_dict() returned, not a "
                            f"{type(state).__name__}: parse saved JSON with json.loads first")
        if not isinstance(state, Mapping) or "tokenfeed_loader" not in state:
            raise _ext.InvalidArgumentError("not a TokenDataset state_dict (no 'tokenfeed_loader' key)")
        self._native.load_state(json.dumps(state["tokenfeed_loader"]))

    @property
    def metrics_port(self) -> int | None:
        """The port of this rank's Prometheus endpoint (the one chosen for ``metrics_port=0``), or None."""
        return self._native.metrics_port()

    @staticmethod
    def replay(state: Mapping[str, Any], step: int, *, rank: int | None = None,
               batch_size: int | None = None, world_size: int | None = None,
               other_states: Sequence[Mapping[str, Any]] = (),
               kafka_properties: Sequence[str] = ()) -> list[dict[str, Any]]:
        """Global step ``step`` of the run ``state`` (a ``state_dict()``) belongs to, row by row.

        The step is produced again by the loader's own pipeline from the
        state's position (a step at or after it: only the windows from there
        are read) or from the run's start (an earlier step), with the state's
        settings, snapshot, ``batch_size`` and ``world_size`` (override the
        last two for a step taken before an elastic resume). Each row is a dict:
        ``step``, ``rank``, ``row``, ``source`` (index of the source),
        ``input_ids`` and ``labels`` (int64 tensors, as the batch had them),
        ``padding`` and ``pieces``, the record slices the row was packed from in
        order: ``{"uri", "partition", "offset", "token_start", "token_end",
        "bos", "eos", "source"}`` (``source`` as ``tokenfeed inspect --json``
        prints it: ``{"kind": "file", "path", "line", "byte_offset"}`` or
        ``{"kind": "message", "topic", "partition", "offset"}``). The row's tokens
        are, piece by piece, the loader's BOS when ``bos``, the record's ids
        ``[token_start, token_end)``, its EOS when ``eos``; then ``padding``
        times ``pad_id``. ``rank=None``: every rank's rows. ``other_states``:
        earlier ``state_dict()``s of the same run; the replay starts from the
        latest state at or before the step (one holding the shards it reads:
        for every rank's rows of a sharded run, ``merge_states``). docs/replay.md.
        """
        rows = _ext._replay(_state_json(state), int(step), rank, batch_size, world_size,
                            [_state_json(s) for s in other_states], list(kafka_properties))
        for row in rows:
            row["input_ids"] = torch.tensor(row["input_ids"], dtype=torch.int64)
            row["labels"] = torch.tensor(row["labels"], dtype=torch.int64)
        return rows

    def metrics(self) -> dict[str, Any]:
        """How the loader is doing.

        ``batches``; ``wait_seconds_total`` and ``last_wait_seconds`` (time spent
        waiting for data); ``tokens_per_second``; ``ready_batches`` of
        ``ready_capacity`` prefetched; ``buffered_bytes``; ``records_read`` and
        ``bytes_read`` from the sources so far (windows read ahead included);
        ``append_wait_seconds_total`` and ``waiting_for_appends`` (``follow=True``:
        time spent waiting for records not yet written, and whether it waits now;
        ``freshness_p50_seconds`` and ``freshness_p99_seconds``, seconds from a
        record's append to the step that carries it, over the last 4096 documents); ``partition_lag``, a
        list of ``{"uri", "partition", "records_behind", "freshness_seconds"}`` (the last one: following, the
        freshness of the partition's last document finished, None before one); ``epochs_completed``,
        passes per source in this round; ``ended_source``, the URI of the source
        that ended the stream (None before the end); ``tokens``, tokens of the
        batches yielded; ``wait_seconds_buckets``, ``(bound, count)`` pairs of
        the per-step waits (cumulative) and ``wait_count``.

        Token accounting, as of the last batch yielded (what ``state_dict()``
        holds): ``consumed``, a list of ``{"uri", "source", "epoch", "tokens",
        "documents"}``, the tokens the stream put into rows and the documents
        begun, per source and epoch (unsharded: all ranks' rows; sharded: this
        rank's shards); ``consumed_from_sample``, the global sample they are
        counted from (0 unless resumed from a state saved without them).
        """
        _client_log.forward()
        return self._native.metrics()


def _state_json(state: Mapping[str, Any]) -> str:
    if not isinstance(state, Mapping) or "tokenfeed_loader" not in state:
        raise _ext.InvalidArgumentError("not a TokenDataset state_dict (no 'tokenfeed_loader' key)")
    return json.dumps(state["tokenfeed_loader"])


def seen(state: Mapping[str, Any], *, kafka_properties: Sequence[str] = ()) -> dict[str, Any]:
    """What the checkpoint whose ``state_dict()`` this is has seen, per source.

    ``{"samples", "step", "sources": [...]}``; each source ``{"uri", "all"
    (a pass completed: every record seen), "samples", "tokens" (packed:
    samples x seq_len; None unpacked), "whole_records", "whole" (per
    partition, offset ranges ``(first, end)`` consumed whole), "partial"
    ([{"partition", "offset", "tokens_taken", "tokens"}])}``. A sharded run's
    state must hold every shard (``merge_states``). docs/replay.md.
    """
    return _ext._seen(_state_json(state), list(kafka_properties))


def merge_states(states: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The ``state_dict()`` of every rank of a sharded run (``shards=S``), saved at one step, as one.

    Each rank of a sharded run keeps the positions of its own shards only. To
    continue with another world size (one that divides S), merge the states
    all ranks saved at the same step and give the result to every rank's
    ``load_state_dict``. Refused, naming the reason, when a rank's state is
    missing or the states are of different runs or steps.
    """
    parts = []
    for state in states:
        if not isinstance(state, Mapping) or "tokenfeed_loader" not in state:
            raise _ext.InvalidArgumentError("not a TokenDataset state_dict (no 'tokenfeed_loader' key)")
        parts.append(json.dumps(state["tokenfeed_loader"]))
    return {"tokenfeed_loader": json.loads(_ext._merge_states(parts))}


_DEFAULTS: dict[str, Any] = _ext._loader_defaults()


def _signature() -> inspect.Signature:
    """__init__'s signature with the native options and their defaults, for help()."""
    explicit = inspect.signature(TokenDataset.__init__)
    params = [p for p in explicit.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    hidden = {"seq_len", "batch_size", "rank", "world_size", "int32_ids"}
    for name, default in _DEFAULTS.items():
        if name not in hidden:
            hint = LoaderOptions.__annotations__.get(name, Any)
            hint = getattr(hint, "__forward_arg__", hint)  # the annotation as written
            params.append(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=hint))
    return explicit.replace(parameters=params)


TokenDataset.__init__.__signature__ = _signature()  # type: ignore[attr-defined]
