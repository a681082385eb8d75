"""tokenfeed: tokens for language-model training, from an embedded log or Kafka.

The native core lives in ``tokenfeed._ext``; this package is its public face.
"""

from tokenfeed._ext import Tokenizer, TokenfeedError

__all__ = ["Tokenizer", "TokenfeedError"]
__version__ = "0.1.0"
