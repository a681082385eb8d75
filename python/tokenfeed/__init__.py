"""tokenfeed: tokens for language-model training, from an embedded log or Kafka.

The native core lives in ``tokenfeed._ext``; this package is its public face.
"""

from tokenfeed._ext import Tokenizer, TokenfeedError

__all__ = ["Tokenizer", "TokenfeedError", "TokenDataset"]


def __getattr__(name: str):
    # TokenDataset needs torch; import it only when asked for.
    if name == "TokenDataset":
        from tokenfeed.dataset import TokenDataset

        return TokenDataset
    raise AttributeError(f"module 'tokenfeed' has no attribute {name!r}")
__version__ = "0.1.0"
