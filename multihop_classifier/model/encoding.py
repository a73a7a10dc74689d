"""The encoder interface of the classifier: what an encoder gives back, its error, and cutting to a token limit."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np


class EncoderUnavailable(RuntimeError):
    """The encoder named by a model cannot be loaded here (missing directory or library)."""


@dataclass(frozen=True, slots=True)
class Encoded:
    """Vectors for a batch of texts, with each text's token count before cutting and whether it was cut."""

    vectors: np.ndarray
    tokens: list[int]
    truncated: list[bool]


class Encoder(Protocol):
    """Turns questions into fixed-size vectors."""

    name: str
    dimension: int
    max_tokens: int

    def spec(self) -> dict[str, Any]:
        """What a saved model records to load this encoder again."""
        ...

    def encode(self, texts: Sequence[str]) -> Encoded:
        """Vectors for texts cut to max_tokens; synchronous and CPU-bound (call from a worker thread)."""
        ...


def cut_to_tokens(text: str, limit: int, count: Callable[[str], int]) -> str:
    """The longest character prefix of text with at most ``limit`` tokens by ``count`` (binary search)."""
    if count(text) <= limit:
        return text
    low, high = 0, len(text)
    while low < high:
        middle = (low + high + 1) // 2
        if count(text[:middle]) <= limit:
            low = middle
        else:
            high = middle - 1
    return text[:low].rstrip()
