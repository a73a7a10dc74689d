"""Chroma plumbing shared by the knowledge base: the client, opened datasets, worker threads, locks.

Every Chroma, jieba and bm25s call goes through ``ChromaStore._run`` (asyncio.to_thread), which runs it
through the store's ChromaAccess (for embedded Chroma: one call at a time across processes, reopening
after another process's calls, see adapters.knowledge.chroma.access) and maps vendor failures to
core.errors.KnowledgeBaseError (DatasetDamaged for a broken collection, see
adapters.knowledge.chroma.damage). Embedded Chroma holds the GIL for a whole upsert, so writes are split
into ``write_batch`` records per call (see adapters.knowledge.chroma.dataset.WRITE_BATCH), and CPU-bound
Python work that should run beside the writes (jieba; ingestion's reading and chunking,
core.knowledge.ingest_plan.WorkerDocumentIndex) goes to worker processes (adapters.knowledge.chroma.workers).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from adapters.knowledge.chroma import dataset as cd
from adapters.knowledge.chroma import keywords as ck
from adapters.knowledge.chroma.access import ChromaAccess
from adapters.knowledge.chroma.catalog import collection_name
from adapters.knowledge.chroma.damage import chroma_failure
from adapters.knowledge.chroma.references import TitleIndex
from adapters.knowledge.chroma.workers import WORKER_PROCESSES, WorkerPool
from adapters.knowledge.keywords.index import KeywordIndex
from adapters.knowledge.keywords.shelf import Shelf
from adapters.knowledge.keywords.tokens import chunk_keywords, tokenise_texts
from core.errors import InvalidInput, KbError
from core.knowledge.ingest_plan import ChunkKeywords
from core.messages import phrase
from core.ports import Embedder

log = logging.getLogger(__name__)
T = TypeVar("T")
PROCESS_TOKENISE_MIN = 256  # below this, starting/feeding the worker process costs more than it saves
REPAIR_WINDOW = 8192  # chunks read back from Chroma and tokenised per step when a keyword index is rebuilt
EmbedderFor = Callable[[str], Embedder]
ShelfFor = Callable[[str, Path], Shelf]
DEFAULT_FUSION = "relative_score"


def _dataset_of(args: tuple[Any, ...]) -> str | None:
    """The dataset a call works on, when one of its arguments is an opened dataset."""
    return next((arg.name for arg in args if isinstance(arg, cd.DatasetHandle)), None)


class ChromaStore:
    """Opened datasets over one Chroma client, with the worker-thread and locking plumbing."""

    def __init__(
        self,
        client: Any,
        *,
        embedders: EmbedderFor,
        keyword_home: Path | None,
        fusion: str = DEFAULT_FUSION,
        catalog_ttl: float | None = None,
        write_batch: int = cd.WRITE_BATCH,
        use_worker_process: bool = True,
        keyword_shelves: ShelfFor | None = None,
    ) -> None:
        """client: a chromadb PersistentClient or HttpClient, or a ChromaAccess (the factory passes an
        EmbeddedChromaAccess for embedded Chroma); embedders: model name -> Embedder.

        keyword_home holds one keyword-index folder per dataset (None: in memory only); keyword_shelves:
        (dataset key, its folder) -> the shelf its manifest is kept on (None: the folder, shared by the
        processes of this machine; PostgreSQL for several machines, adapters.knowledge.factory). catalog_ttl:
        re-read catalogs older than this many seconds before a search (server mode, where other
        processes write); None trusts the in-process cache, refreshed on every write. write_batch:
        records per upsert call (embedded Chroma holds the GIL for a whole call, see chroma.dataset).
        use_worker_process: run run_in_worker calls, and tokenising of batches of PROCESS_TOKENISE_MIN+
        chunks, in worker processes (False: in threads).
        """
        self._access = client if isinstance(client, ChromaAccess) else ChromaAccess(client)
        self._access.reopened = self._rebind
        self._embedders = embedders
        self._keyword_home = keyword_home
        self._keyword_shelves = keyword_shelves
        self._fusion = fusion
        self._catalog_ttl = catalog_ttl
        self._write_batch = max(1, write_batch)
        self._datasets: dict[str, cd.DatasetHandle] = {}
        self._open_lock = asyncio.Lock()
        self._keyword_locks: dict[str, asyncio.Lock] = {}
        self._workers = WorkerPool(enabled=use_worker_process)
        self._title_indexes: dict[str, tuple[int, TitleIndex]] = {}  # dataset -> (catalog generation, index)

    # ---------- plumbing ----------

    async def _run(
        self, function: Callable[..., T], /, *args: Any, for_dataset: str | None = None, **kwargs: Any
    ) -> T:
        """Run a blocking call in a worker thread through the access, mapping vendor failures to
        KnowledgeBaseError (DatasetDamaged when the dataset, for_dataset or an opened one in args, is broken)."""
        try:
            return await asyncio.to_thread(self._access.call, function, *args, **kwargs)
        except KbError:
            raise
        except Exception as exc:
            raise chroma_failure(exc, for_dataset or _dataset_of(args)) from exc

    async def _run_on_client(
        self, function: Callable[..., T], /, *args: Any, for_dataset: str | None = None, **kwargs: Any
    ) -> T:
        """_run for function(client, *args, **kwargs): the client as it is when the call runs (reopened or not)."""
        return await self._run(
            lambda: function(self._access.client, *args, **kwargs), for_dataset=for_dataset
        )

    def _rebind(self, client: Any) -> None:
        """After a reopen (in the worker thread, inside the call): opened datasets use the new client.

        A dataset that is gone, or cannot be read now, is forgotten: its next use opens it again (and
        reports what is wrong with it), and the other datasets go on working.
        """
        for name, handle in list(self._datasets.items()):
            try:
                rebound = cd.rebind(client, handle)
            except Exception as exc:
                log.warning("dataset %r could not be reopened: %r", name, exc)
                rebound = False
            if not rebound:
                self._datasets.pop(name, None)

    def _keyword_dir(self, dataset: str) -> Path | None:
        return None if self._keyword_home is None else self._keyword_home / collection_name(dataset)

    def _keyword_index(self, dataset: str) -> KeywordIndex:
        """A dataset's keyword index over its folder and shelf (nothing is read until it is used)."""
        folder = self._keyword_dir(dataset)
        if folder is None or self._keyword_shelves is None:
            return KeywordIndex(folder)
        return KeywordIndex(folder, self._keyword_shelves(collection_name(dataset), folder))

    async def _open(self, dataset: str) -> cd.DatasetHandle | None:
        handle = self._datasets.get(dataset)
        if handle is not None:
            return handle
        async with self._open_lock:
            handle = self._datasets.get(dataset)
            if handle is None:
                handle = await self._run_on_client(
                    cd.open_dataset, dataset, self._keyword_index(dataset), for_dataset=dataset
                )
                if handle is not None:
                    self._datasets[dataset] = handle
        return handle

    async def _create(self, dataset: str, model: str, dimension: int) -> cd.DatasetHandle:
        async with self._open_lock:
            handle = await self._run_on_client(
                cd.create_dataset,
                dataset,
                model=model,
                dimension=dimension,
                keywords=self._keyword_index(dataset),
                for_dataset=dataset,
            )
            self._datasets[dataset] = handle
        self._check_model(handle, model)
        return handle

    @staticmethod
    def _check_model(handle: cd.DatasetHandle, model: str) -> None:
        if handle.model != model:
            raise InvalidInput(
                phrase(
                    "error.written_with_other_model",
                    dataset=handle.name,
                    built_with=handle.model,
                    model=model,
                )
            )

    async def _fresh(self, handle: cd.DatasetHandle) -> cd.DatasetHandle:
        ttl = self._catalog_ttl
        if ttl is not None and time.monotonic() - handle.catalog.loaded_at > ttl:
            await self._run_on_client(cd.refresh_or_rebind, handle, for_dataset=handle.name)
        return handle

    def _keyword_lock(self, handle: cd.DatasetHandle) -> asyncio.Lock:
        """Serialises a dataset's keyword searches with catalog flips, so BM25 and catalog agree."""
        return self._keyword_locks.setdefault(handle.name, asyncio.Lock())

    # ---------- datasets ----------

    async def list_datasets(self) -> list[str]:
        """Names of the datasets in the store."""
        return await self._run_on_client(cd.list_dataset_names)

    async def dataset_model(self, dataset: str) -> str | None:
        """The embedding model a dataset was built with; None when it does not exist."""
        handle = await self._open(dataset)
        return None if handle is None else handle.model

    @property
    def chunk_keywords(self) -> ChunkKeywords:
        """Keyword terms of a document's chunks (WorkerDocumentIndex): what replace_documents indexes."""
        return chunk_keywords

    async def run_in_worker(self, function: Callable[..., T], /, *args: Any) -> T:
        """function(*args) in a worker process (WorkerDocumentIndex; see adapters.knowledge.chroma.workers)."""
        return await self._workers.run(function, *args)

    async def _tokenise(self, texts: list[str]) -> list[str]:
        """Keyword tokens of texts: in a worker process for large batches, else in a thread."""
        try:
            if len(texts) >= PROCESS_TOKENISE_MIN:
                return await self.run_in_worker(tokenise_texts, texts)
            return await asyncio.to_thread(tokenise_texts, texts)
        except KbError:
            raise
        except Exception as exc:
            raise chroma_failure(exc, None) from exc

    async def _index_missing_keywords(self, handle: cd.DatasetHandle) -> None:
        """Tokenise the live chunks a dataset's keyword index lacks, reading their texts back from Chroma.

        Nothing to do when the saved index matches the catalog. On a new machine (server mode), after a
        tokenizer change or a lost folder, the texts are tokenised in the worker processes, split
        between them, so the repair takes a fraction of the time and leaves the event loop's thread
        alone (jieba in a thread holds the GIL). Call under the dataset's keyword lock.
        """
        if handle.keywords_synced and handle.keywords.signature == handle.catalog.signature():
            return  # in step (every search after the first): no thread hop
        missing = await self._run(ck.keyword_ids_missing, handle)
        if missing:
            log.info(
                "keyword index %s: tokenising %d chunks read back from Chroma", handle.name, len(missing)
            )
        for start in range(0, len(missing), REPAIR_WINDOW):
            texts = await self._run(
                ck.fetch_index_texts_in_batches, handle, missing[start : start + REPAIR_WINDOW]
            )
            ids = list(texts)
            size = -(-len(ids) // WORKER_PROCESSES)
            parts = [ids[i : i + size] for i in range(0, len(ids), size)]
            tokens = await asyncio.gather(*(self._tokenise([texts[i] for i in part]) for part in parts))
            tokenised = [
                pair
                for part, terms in zip(parts, tokens, strict=True)
                for pair in zip(part, terms, strict=True)
            ]
            await self._run(handle.keywords.add_tokenised, tokenised)

    async def _ready_and_save(self, handle: cd.DatasetHandle) -> None:
        """Under the dataset's keyword lock: the keyword index loaded, repaired, built and saved."""
        async with self._keyword_lock(handle):
            await self._index_missing_keywords(handle)
            await self._run(ck.ensure_keywords, handle, searchable=True)
            await self._run(handle.keywords.save)

    async def warm_up(self) -> list[str]:
        """Open every dataset and make its keyword index searchable (loaded, repaired, built, saved).

        `kb serve` runs it in the background at start, so the first question does not pay for a
        repair; a search arriving meanwhile waits on the same per-dataset lock. Returns the names.
        """
        names = await self.list_datasets()
        for name in names:
            handle = await self._open(name)
            if handle is None:
                continue
            await self._ready_and_save(await self._fresh(handle))
        return names

    # ---------- lifecycle ----------

    async def flush(self) -> None:
        """Rebuild changed keyword indexes and save them (call after an ingest batch; close() does)."""
        for handle in list(self._datasets.values()):
            if handle.keywords.dirty or handle.keywords_synced:
                await self._ready_and_save(handle)

    async def close(self) -> None:
        """Flush keyword indexes, stop the worker processes and close the access (an embedded client)."""
        try:
            await self.flush()
        finally:
            try:
                await self._workers.close()
            finally:
                for handle in self._datasets.values():
                    await asyncio.to_thread(handle.keywords.close)
                await asyncio.to_thread(self._access.close)
