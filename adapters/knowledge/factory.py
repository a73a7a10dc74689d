"""Builds the Chroma knowledge base from settings: the client (embedded or server), embedders, writer locks.

Embedded mode (KB_CHROMA_URL unset) opens ``PersistentClient(KB_HOME/chroma)`` through an
EmbeddedChromaAccess: two processes must never work on that folder at the same moment, so each Chroma
call takes KB_HOME/locks/chroma.lock and a process reopens its client after another's calls
(docs/storage.md#one-call-at-a-time-on-an-embedded-chroma-folder, adapters.knowledge.chroma.access);
`kb serve`, `kb search` and `kb ingest` may then run at once. Server mode (``chroma run --path ... --port ...`` and KB_CHROMA_URL) leaves the folder to the server.

Writers of a dataset (ingest, docs delete/disable/enable, datasets drop/rebuild) also hold its writer
lock (writer_locks): a lock file under KB_HOME/locks, or a PostgreSQL advisory lock when Chroma is a
server and the conversation store is PostgreSQL (writers on several machines, adapters.knowledge.locks).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from adapters.embedders.e5 import E5_MODEL_NAME, E5Embedder
from adapters.embedders.local import LOCAL_MODEL_NAME, LocalEmbedder
from adapters.knowledge.chroma.access import ChromaAccess, EmbeddedChromaAccess
from adapters.knowledge.chroma.kb import ChromaKnowledgeBase
from adapters.knowledge.chroma.store import ShelfFor
from adapters.knowledge.keywords.shelf import Shelf
from adapters.knowledge.locks.file_lock import FileWriterLocks
from adapters.knowledge.locks.holder import WriterLocks
from core.errors import KnowledgeBaseError, ModelUnavailable
from core.messages import phrase
from core.ports import Embedder

log = logging.getLogger(__name__)
SERVER_CATALOG_TTL = 2.0  # seconds; other processes may write through the same server
LOCKS_FOLDER = "locks"  # under KB_HOME: the writer lock of each dataset, and embedded Chroma's call lock
CHROMA_LOCK_FILE = "chroma.lock"


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


def chroma_access(settings: Any) -> ChromaAccess:
    """How the knowledge base reaches Chroma: an HttpClient as it is, or embedded Chroma one call at a time."""
    storage = settings.storage
    if storage.chroma_url:
        return ChromaAccess(
            make_chroma_client(chroma_path=storage.chroma_path, chroma_url=storage.chroma_url)
        )

    def open_client(path: Path) -> Any:
        return make_chroma_client(chroma_path=path, chroma_url=None)

    lock_path = Path(storage.home) / LOCKS_FOLDER / CHROMA_LOCK_FILE
    return EmbeddedChromaAccess(storage.chroma_path, lock_path, open_client=open_client)


def _shared_database(settings: Any) -> str | None:
    """The PostgreSQL URL that machines sharing a Chroma server also share; None on one machine."""
    storage = settings.storage
    url = str(storage.effective_database_url)
    if storage.chroma_url and url.startswith(("postgres://", "postgresql://")):
        return url
    return None


def keyword_shelves(settings: Any) -> ShelfFor | None:
    """Where keyword manifests and segments are kept: PostgreSQL where several machines share a Chroma
    server and a PostgreSQL store (as the writer lock), else None (each dataset's folder under KB_HOME,
    shared by the processes of one machine). docs/storage.md#keyword-segments."""
    url = _shared_database(settings)
    if url is None:
        return None
    from adapters.knowledge.keywords.postgres_shelf import PostgresShelf

    def shelf(key: str, folder: Path) -> Shelf:
        return PostgresShelf(url, key)

    return shelf


def writer_locks(settings: Any, *, command: str) -> WriterLocks:
    """The dataset writer locks: PostgreSQL advisory locks for a Chroma server shared over PostgreSQL,
    else lock files under KB_HOME/locks. command: this process's command line (the holder's record)."""
    url = _shared_database(settings)
    if url is not None:
        from adapters.knowledge.locks.advisory_lock import PostgresWriterLocks

        return PostgresWriterLocks(url, command=command)
    return FileWriterLocks(Path(settings.storage.home) / LOCKS_FOLDER, command=command)


class EmbedderRegistry:
    """Embedders by model name, built once each: the two offline models, or an OpenAI-compatible one.

    document_threads: BLAS threads the offline USE model embeds documents with (1 where queries are served;
    KB_EMBED_THREADS in the commands that ingest); own_process: it embeds them in a process of its own (the
    commands that ingest: adapters/embedders/local.py)."""

    def __init__(self, settings: Any, *, document_threads: int = 1, own_process: bool = False) -> None:
        self._settings = settings
        self._document_threads = document_threads
        self._own_process = own_process
        self._embedders: dict[str, Embedder] = {}

    def __call__(self, model: str) -> Embedder:
        embedder = self._embedders.get(model)
        if embedder is None:
            embedder = self._build(model)
            self._embedders[model] = embedder
        return embedder

    def _build(self, model: str) -> Embedder:
        if model == LOCAL_MODEL_NAME:
            return LocalEmbedder(document_threads=self._document_threads, own_process=self._own_process)
        if model == E5_MODEL_NAME:
            return E5Embedder()
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
    """The knowledge base for bot.settings.Settings; keyword indexes are flushed on exit. Without `embedders`
    (the knowledge commands: ingest, rebuild, sync by hand) documents are embedded with KB_EMBED_THREADS."""
    access = await asyncio.to_thread(chroma_access, settings)
    registry = EmbedderRegistry(
        settings, document_threads=settings.embedding.document_threads, own_process=embedders is None
    )
    kb = ChromaKnowledgeBase(
        access,
        embedders=embedders or registry,
        keyword_home=Path(settings.storage.home) / "keywords",
        catalog_ttl=SERVER_CATALOG_TTL if settings.storage.chroma_url else None,
        keyword_shelves=keyword_shelves(settings),
    )
    try:
        yield kb
    finally:
        try:
            await kb.close()
        finally:
            await registry.aclose()
