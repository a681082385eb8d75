"""TokenDataset: packed training batches from tokenfeed topics, for PyTorch."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Union

import torch
from torch.utils.data import IterableDataset

from tokenfeed import _ext

Sources = Union[str, Sequence[str], Sequence[tuple[str, float]], Mapping[str, float]]


def _sources(uri: Sources) -> tuple[list[str], list[float]]:
    if isinstance(uri, str):
        return [uri], [1.0]
    if isinstance(uri, Mapping):
        return list(uri.keys()), [float(w) for w in uri.values()]
    uris, weights = [], []
    for item in uri:
        if isinstance(item, str):
            uris.append(item)
            weights.append(1.0)
        else:
            u, w = item
            uris.append(u)
            weights.append(float(w))
    if not uris:
        raise ValueError("no source: give a topic URI or a weighted list of them")
    return uris, weights


def _rank_and_world(rank: int | None, world_size: int | None) -> tuple[int, int]:
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

    ``uri`` is a ``log:DIR/TOPIC`` or ``kafka://HOST:PORT/TOPIC`` URI, a list of
    them, or a mapping (or list of pairs) from URI to weight for mixing. Each
    item is a dict of torch tensors: ``input_ids``, ``labels`` (the next token,
    ``ignore_index`` where there is none), ``position_ids`` (restarting at each
    document), ``document_ids``, ``cu_seqlens`` and ``max_seqlen`` (for
    variable-length attention), ``attention_mask`` (without packing) and
    ``source`` (which source each row came from).

    Rank and world size default to torch.distributed's (or RANK/WORLD_SIZE as
    torchrun sets them). Every rank takes its share of one global stream whose
    order does not depend on the world size, so ``state_dict()`` taken at step k
    resumes exactly, also with another world size or batch size. Use it directly
    or with ``DataLoader(dataset, batch_size=None, num_workers=0)``: the
    prefetching happens in native threads.

    Shuffling visits blocks of ``block_records`` consecutive records in a new
    order each epoch and shuffles the documents of ``window_blocks`` blocks at
    a time. ``block_records=None`` picks it by transport: 1024 records for the
    embedded log, 4096 for Kafka (each block's seek restarts a fetch there).
    """

    def __init__(
        self,
        uri: Sources,
        seq_len: int,
        batch_size: int,
        *,
        seed: int = 0,
        shuffle: bool = True,
        rank: int | None = None,
        world_size: int | None = None,
        epochs: int = 1,
        pack: bool = True,
        bos_id: int | None = None,
        eos_id: int | None = None,
        pad_id: int = 0,
        ignore_index: int = -100,
        cross_document_labels: bool = False,
        dtype: torch.dtype = torch.int64,
        pin_memory: bool = False,
        block_records: int | None = None,
        window_blocks: int = 8,
        memory_budget_bytes: int = 256 << 20,
        prefetch_batches: int = 4,
        kafka_properties: Sequence[str] = (),
    ) -> None:
        super().__init__()
        if dtype not in (torch.int64, torch.int32):
            raise ValueError("dtype must be torch.int64 or torch.int32")
        if pin_memory and not torch.cuda.is_available():
            raise ValueError("pin_memory=True needs a CUDA device")
        for name, value in (("seq_len", seq_len), ("batch_size", batch_size), ("epochs", epochs)):
            if not isinstance(value, int) or value < 0 or (value == 0 and name != "epochs"):
                raise ValueError(f"{name} must be a positive integer, not {value!r}")
        self.uris, self.weights = _sources(uri)
        self.rank, self.world_size = _rank_and_world(rank, world_size)
        self.seq_len, self.batch_size = seq_len, batch_size
        self.pin_memory = pin_memory
        kafka = list(kafka_properties)
        snapshot = self._agreed_snapshot(kafka)
        self._native = _ext._create_loader(
            self.uris, self.weights, seq_len, batch_size, self.rank, self.world_size, seed, shuffle,
            block_records or 0, window_blocks, epochs, pack, bos_id, eos_id, pad_id, ignore_index,
            cross_document_labels, dtype == torch.int32, memory_budget_bytes, prefetch_batches, snapshot, kafka)
        self._wait_total = 0.0

    def _agreed_snapshot(self, kafka: list[str]) -> str:
        """Rank 0's view of the topics, so that all ranks build the same stream."""
        dist = torch.distributed
        if self.world_size > 1 and dist.is_available() and dist.is_initialized():
            box = [_ext._take_snapshot(self.uris, kafka) if dist.get_rank() == 0 else None]
            dist.broadcast_object_list(box, src=0)
            return box[0]
        return ""  # one process, or ranks reading a topic that no longer grows

    def __iter__(self) -> Iterator[dict[str, Any]]:
        info = torch.utils.data.get_worker_info()
        if info is not None and info.num_workers > 0:
            raise RuntimeError("TokenDataset prefetches in native threads: use DataLoader(..., num_workers=0)")
        while True:
            batch = self._native.next()
            if batch is None:
                return
            tokens = batch.pop("_token_arrays")  # [3, B, T], one buffer
            batch["input_ids"], batch["labels"], batch["position_ids"] = tokens[0], tokens[1], tokens[2]
            if self.pin_memory:
                batch = {k: (v.pin_memory() if isinstance(v, torch.Tensor) else v) for k, v in batch.items()}
            yield batch

    def state_dict(self) -> dict[str, Any]:
        """The position after the last batch this iterator yielded (JSON-serialisable)."""
        return {"tokenfeed_loader": json.loads(self._native.state())}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Continues after the batches a state_dict() had seen (before or during iteration)."""
        if "tokenfeed_loader" not in state:
            raise ValueError("not a TokenDataset state_dict (no 'tokenfeed_loader' key)")
        self._native.load_state(json.dumps(state["tokenfeed_loader"]))

    def metrics(self) -> dict[str, Any]:
        """Time waited for data, tokens/s, prefetch fill and partition lag."""
        return self._native.metrics()
