"""Dataset maintenance on the store: the list, the check, drop and rebuild behind `kb datasets`.

The blocking parts are adapters.knowledge.chroma.health (summaries, the check) and
adapters.knowledge.chroma.rebuild (re-embedding from stored chunks, the swap, drop); this class runs
them through the store's access and re-embeds with the dataset's own embedding model. Drop and
rebuild change a dataset: callers hold its writer lock (adapters.knowledge.locks) around them.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from adapters.embedders.ahead import embedded_ahead
from adapters.knowledge.chroma import health
from adapters.knowledge.chroma import rebuild as rb
from adapters.knowledge.chroma.damage import DatasetDamaged
from adapters.knowledge.chroma.dataset import DatasetHandle
from adapters.knowledge.chroma.store import ChromaStore
from core.errors import NotFound
from core.messages import phrase


def _unknown(dataset: str) -> NotFound:
    return NotFound(phrase("error.unknown_dataset", dataset=dataset))


class ChromaMaintenance(ChromaStore):
    """ChromaStore plus what `kb datasets` needs: summaries, check, drop, rebuild."""

    async def _existing(self, dataset: str) -> DatasetHandle:
        handle = await self._open(dataset)
        if handle is None:
            raise _unknown(dataset)
        return handle

    async def dataset_summaries(self) -> list[health.DatasetSummary]:
        """Every dataset with its size, model and last change; a damaged one with its problem instead."""
        summaries = []
        for name in await self.list_datasets():
            try:
                handle = await self._open(name)
                if handle is not None:
                    summaries.append(await self._run(health.summarize, handle))
            except DatasetDamaged as damaged:
                summaries.append(health.DatasetSummary(name, 0, 0, "", 0.0, problem=damaged.reason))
        return summaries

    async def check_dataset(self, dataset: str) -> health.DatasetCheck:
        """Whether the catalog, the collection (and its vector index) and the keyword index agree."""
        return await self._checked(dataset, health.check_dataset)

    async def quick_check_dataset(self, dataset: str) -> health.DatasetCheck:
        """check_dataset by counts and signatures only (health.quick_check): what `kb doctor` runs."""
        return await self._checked(dataset, health.quick_check)

    async def _checked(
        self, dataset: str, check: Callable[[DatasetHandle, Path | None], health.DatasetCheck]
    ) -> health.DatasetCheck:
        try:
            handle = await self._existing(dataset)
        except DatasetDamaged as damaged:
            return health.DatasetCheck(dataset, problems=(f"it cannot be opened ({damaged.reason})",))
        return await self._run(check, handle, self._keyword_dir(dataset))

    async def drop_dataset(self, dataset: str) -> health.DatasetSummary:
        """Delete a dataset: its collections and its keyword index (the source files are not touched)."""
        try:
            summary = await self._run(health.summarize, await self._existing(dataset))
        except DatasetDamaged as damaged:
            summary = health.DatasetSummary(dataset, 0, 0, "", 0.0, problem=damaged.reason)
        await self._run_on_client(rb.drop, dataset, for_dataset=dataset)
        await self._forget_keywords(dataset)
        return summary

    async def _forget_keywords(self, dataset: str) -> None:
        """Close the dataset (if open) and delete its saved keyword index, wherever it is kept."""
        handle = self._datasets.pop(dataset, None)
        keywords = handle.keywords if handle is not None else self._keyword_index(dataset)
        try:
            await self._run(keywords.clear_saved)
        finally:
            await self._run(keywords.close)

    async def rebuild_dataset(
        self, dataset: str, *, on_progress: Callable[[int, int], object] | None = None
    ) -> rb.RebuildReport:
        """Re-embed the dataset's live chunks from Chroma into fresh collections and swap them in.

        on_progress(done, total) after each batch of chunks. Documents whose chunks are not all stored
        any more are left out (RebuildReport.dropped); the keyword index is rebuilt from the new records.
        """
        started = time.perf_counter()
        handle = await self._existing(dataset)
        documents, incomplete = await self._run(rb.stored_documents, handle)
        created = await self._run(rb.created_at, handle)
        model = handle.model
        embedder = self._embedders(model)
        ids = [chunk_id for document in documents for chunk_id in document.ids]
        metadatas = [meta for document in documents for meta in document.metadatas]
        texts = [text for document in documents for text in document.texts]
        dimension = handle.dimension  # the vectors' own, once the first batch is embedded
        await self._run_on_client(
            rb.start_rebuild, dataset, model=model, dimension=dimension, for_dataset=dataset
        )

        async def embedding(start: int, end: int) -> np.ndarray:
            return np.asarray(await embedder.embed_documents(texts[start:end]), dtype=np.float32)

        async with contextlib.aclosing(embedded_ahead(len(ids), self._write_batch, embedding)) as batches:
            async for start, end, vectors in batches:
                dimension = int(vectors.shape[1])
                await self._run_on_client(
                    rb.write_rebuilt,
                    dataset,
                    ids[start:end],
                    vectors,
                    metadatas[start:end],
                    for_dataset=dataset,
                )
                if on_progress is not None:
                    on_progress(min(end, len(ids)), len(ids))
        entries = [document.entry for document in documents]
        await self._run_on_client(rb.write_rebuilt_catalog, dataset, entries, for_dataset=dataset)
        await self._run_on_client(
            rb.swap_in, dataset, model=model, dimension=dimension, created=created, for_dataset=dataset
        )
        await self._forget_keywords(dataset)
        fresh = await self._open(dataset)
        if fresh is None:  # pragma: no cover - the swap just put it in place
            raise _unknown(dataset)
        await self._ready_and_save(fresh)
        return rb.RebuildReport(
            name=dataset,
            model=model,
            documents=len(documents),
            chunks=len(ids),
            dropped=tuple(entry.info.name for entry in incomplete),
            seconds=time.perf_counter() - started,
        )
