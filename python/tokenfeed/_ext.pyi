from collections.abc import Sequence
from typing import Literal

import numpy as np
import numpy.typing as npt

_Text = str | bytes
_Utf8 = Literal["replace", "reject"]

class TokenfeedError(RuntimeError): ...

class Tokenizer:
    """An exact, fast byte-level BPE tokenizer loaded from a tokenizer.json."""

    @staticmethod
    def from_file(path: str, *, fast_pretokenizers: bool = True) -> Tokenizer: ...
    @staticmethod
    def from_str(json: str, *, fast_pretokenizers: bool = True) -> Tokenizer: ...
    def encode(
        self,
        text: _Text,
        *,
        add_special_tokens: bool = False,
        split_special_tokens: bool = False,
        utf8: _Utf8 = "replace",
    ) -> list[int]: ...
    def encode_numpy(
        self,
        text: _Text,
        *,
        add_special_tokens: bool = False,
        split_special_tokens: bool = False,
        utf8: _Utf8 = "replace",
    ) -> npt.NDArray[np.uint32]: ...
    def encode_batch(
        self,
        texts: Sequence[_Text],
        *,
        add_special_tokens: bool = False,
        split_special_tokens: bool = False,
        utf8: _Utf8 = "replace",
        num_threads: int = 0,
    ) -> list[list[int]]: ...
    def encode_batch_numpy(
        self,
        texts: Sequence[_Text],
        *,
        add_special_tokens: bool = False,
        split_special_tokens: bool = False,
        utf8: _Utf8 = "replace",
        num_threads: int = 0,
    ) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]: ...
    def decode(self, ids: Sequence[int], *, skip_special_tokens: bool = False) -> str: ...
    def token_to_id(self, token: str) -> int | None: ...
    def id_to_token(self, id: int) -> str | None: ...
    def is_special(self, id: int) -> bool: ...
    @property
    def vocab_size(self) -> int: ...
    @property
    def bos_id(self) -> int | None: ...
    @property
    def eos_id(self) -> int | None: ...
    def describe(self) -> str: ...

class _Loader:
    def next(self) -> dict[str, object] | None: ...
    def state(self) -> str: ...
    def load_state(self, state: str) -> None: ...
    def snapshot(self) -> str: ...
    def metrics(self) -> dict[str, object]: ...

def _create_loader(
    uris: list[str], weights: list[float], seq_len: int, batch_size: int, rank: int, world_size: int, seed: int,
    shuffle: bool, block_records: int, window_blocks: int, epochs: int, pack: bool, bos_id: int | None,
    eos_id: int | None, pad_id: int, ignore_index: int, cross_document_labels: bool, int32_ids: bool,
    memory_budget_bytes: int, prefetch_batches: int, snapshot: str, kafka_properties: list[str],
) -> _Loader: ...
def _take_snapshot(uris: list[str], kafka_properties: list[str]) -> str: ...
