"""Builds the Chroma knowledge base from settings: the client (embedded or server) and the embedders.

Embedded mode (KB_CHROMA_URL unset) opens ``PersistentClient(KB_HOME/chroma)``: exactly one process may
own that folder (docs/storage.md#one-process-owns-an-embedded-chroma-folder: two processes corrupt the HNSW
index), so run ingestion and the bot in
the same process, or start ``chroma run --path ... --port ...`` and set KB_CHROMA_URL for both.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from adapters.embedders.local import LOCAL_MODEL_NAME, LocalEmbedder
from adapters.knowledge.chroma.kb import ChromaKnowledgeBase
from core.errors import KnowledgeBaseError, ModelUnavailable
from core.messages import phrase
from core.ports import Embedder

log = logging.getLogger(__name__)
SERVER_CATALOG_TTL = 2.0  # seconds; other processes may write through the same server


def make_chroma_client(*, chroma_path: Path, chroma_url: str | None) -> Any:
    """A synchronous Chroma client: HttpClient for KB_CHROMA_URL, else PersistentClient(chroma_path)."""
    import chromadb

    try:
        if chroma_url:
            parts = urlsplit(chroma_url if "//" in chroma_url else f"http://{chroma_url}")
            return chromadb.HttpClient(
                host=parts.hostname or "localhost",
                port=parts.port or (443 if parts.scheme == "https" else 8000),
                ssl=parts.scheme == "https",
            )
        chroma_path.mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(chroma_path))
    except Exception as exc:
        where = chroma_url or str(chroma_path)
        raise KnowledgeBaseError(
            phrase("error.knowledge_store_unopened", where=where), detail=repr(exc)
        ) from exc


class EmbedderRegistry:
    """Embedders by model name, built once each: the offline model, or an OpenAI-compatible one."""

    def __init__(self, settings: Any) -> None:
        self._settings = settings
        self._embedders: dict[str, Embedder] = {}

    def __call__(self, model: str) -> Embedder:
        embedder = self._embedders.get(model)
        if embedder is None:
            embedder = self._build(model)
            self._embedders[model] = embedder
        return embedder

    def _build(self, model: str) -> Embedder:
        if model == LOCAL_MODEL_NAME:
            return LocalEmbedder()
        settings = self._settings
        base_url = settings.embedding.base_url or settings.model.base_url
        if not base_url:
            raise ModelUnavailable(
                f"embedding model {model!r} needs KB_EMBEDDING_BASE_URL or OPENAI_BASE_URL"
            )
        from adapters.embedders.openai_compatible import OpenAIEmbedder

        embedder: Embedder = OpenAIEmbedder(
            base_url=base_url,
            api_key=settings.model.api_key,
            model=model,
            retries=settings.model.retries,
            timeout=settings.model.timeout,
        )
        return embedder

    async def aclose(self) -> None:
        """Close embedders that hold connections."""
        for embedder in self._embedders.values():
            close = getattr(embedder, "aclose", None)
            if close is not None:
                await close()


@asynccontextmanager
async def open_knowledge_base(
    settings: Any, *, embedders: Callable[[str], Embedder] | None = None
) -> AsyncIterator[ChromaKnowledgeBase]:
    """The knowledge base for bot.settings.Settings; keyword indexes are flushed on exit."""
    client = await asyncio.to_thread(
        make_chroma_client, chroma_path=settings.storage.chroma_path, chroma_url=settings.storage.chroma_url
    )
    registry = EmbedderRegistry(settings)
    kb = ChromaKnowledgeBase(
        client,
        embedders=embedders or registry,
        keyword_home=Path(settings.storage.home) / "keywords",
        catalog_ttl=SERVER_CATALOG_TTL if settings.storage.chroma_url else None,
    )
    try:
        yield kb
    finally:
        try:
            await kb.close()
        finally:
            await registry.aclose()
