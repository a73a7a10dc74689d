"""Helpers for the knowledge-base store tests: deterministic fake embedders and a real embedded Chroma KB."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import chromadb

from adapters.knowledge.chroma.kb import ChromaKnowledgeBase
from adapters.knowledge.document_readers import UnreadableDocument, read_document
from core.knowledge.ingest import ingest
from core.knowledge.ingest_plan import IngestProgress
from core.models import Chunk, DocumentInfo
from core.ports import Embedder
from core.text import tokenize


class CountingEmbedder:
    """Deterministic bag-of-tokens embedder (hashed buckets), counting every call.

    Texts sharing tokens get close vectors, so searching a chunk's own words finds it.
    """

    def __init__(self, name: str = "fake-bag", dimension: int = 64) -> None:
        self._name = name
        self._dimension = dimension
        self.query_calls: list[str] = []
        self.document_calls = 0
        self.texts_embedded = 0

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        return self._dimension

    def vector(self, text: str) -> list[float]:
        values = [0.0] * self._dimension
        for token in tokenize(text) or [text]:
            digest = hashlib.sha1(token.encode("utf-8")).digest()
            values[int.from_bytes(digest[:4], "big") % self._dimension] += 1.0
        norm = math.sqrt(sum(v * v for v in values)) or 1.0
        return [v / norm for v in values]

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.document_calls += 1
        self.texts_embedded += len(texts)
        return await asyncio.to_thread(lambda: [self.vector(text) for text in texts])

    async def embed_query(self, text: str) -> list[float]:
        self.query_calls.append(text)
        return await asyncio.to_thread(self.vector, text)


class KeywordBasisEmbedder(CountingEmbedder):
    """Maps a text to the basis vector of the first listed keyword it contains (exact cosine ties)."""

    def __init__(self, name: str, dimension: int, keywords: Sequence[str]) -> None:
        super().__init__(name, dimension)
        self._keywords = list(keywords)

    def vector(self, text: str) -> list[float]:
        values = [0.0] * self.dimension
        for index, keyword in enumerate(self._keywords):
            if keyword in text:
                values[index] = 1.0
                return values
        values[-1] = 1.0
        return values


def registry(*embedders: Embedder) -> Callable[[str], Embedder]:
    """An embedder lookup by model name over the given embedders."""
    by_name = {embedder.name: embedder for embedder in embedders}
    return by_name.__getitem__


def make_kb(
    home: Path, *embedders: Embedder, fusion: str = "relative_score", write_batch: int = 512
) -> ChromaKnowledgeBase:
    """A knowledge base over a real embedded Chroma under home."""
    client = chromadb.PersistentClient(path=str(home / "chroma"))
    return ChromaKnowledgeBase(
        client,
        embedders=registry(*embedders),
        keyword_home=home / "keywords",
        fusion=fusion,
        write_batch=write_batch,
    )


async def ingest_one(
    store: Any,
    path: Path,
    embedder: Embedder,
    *,
    on_progress: Callable[[IngestProgress], object] | None = None,
) -> Any:
    """Ingest one file into dataset "d" the way kb ingest does (its summary)."""
    return await ingest(
        store,
        "d",
        [path],
        read=read_document,
        embedding_model=embedder.name,
        unreadable=(UnreadableDocument,),
        on_progress=on_progress,
    )


def doc(dataset: str, doc_id: str, *, content_hash: str = "h1", name: str | None = None) -> DocumentInfo:
    """A DocumentInfo for tests."""
    return DocumentInfo(
        dataset=dataset,
        document_id=doc_id,
        name=name or doc_id,
        source=f"/docs/{doc_id}.md",
        content_hash=content_hash,
        enabled=True,
        chunk_count=0,
    )


def chunks(*texts: str, heading: tuple[str, ...] = ("Guide",)) -> list[Chunk]:
    """Chunks with the given texts, in order."""
    return [
        Chunk(text=text, heading_path=heading, position=i, tokens=len(text)) for i, text in enumerate(texts)
    ]


class Ticker:
    """Counts event-loop ticks and the longest gap between them, to prove work runs off the loop."""

    def __init__(self, interval: float = 0.005) -> None:
        self.interval = interval
        self.ticks = 0
        self.max_gap = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        last = time.perf_counter()
        while True:
            await asyncio.sleep(self.interval)
            now = time.perf_counter()
            self.max_gap = max(self.max_gap, now - last)
            self.ticks += 1
            last = now

    async def __aenter__(self) -> Ticker:
        self._task = asyncio.create_task(self._run())
        await asyncio.sleep(0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
