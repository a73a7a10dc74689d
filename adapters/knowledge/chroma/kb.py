"""The knowledge base over Chroma: core.ports.KnowledgeBase (search) and core.ports.DocumentIndex (writes).

Every Chroma, jieba and bm25s call runs in a worker thread (asyncio.to_thread); vendor errors become
core.errors.KnowledgeBaseError. Search modes (docs/design.md#search-modes):

* ``embedding``: similarity = 1 - cosine distance. Datasets are grouped by the embedding model they
  were built with; the query is embedded once per model; groups are merged by score, ties by id.
* ``keywords``: BM25 over jieba tokens (adapters.knowledge.keywords), scored ``normalise_bm25`` into [0, 1);
  no embedding call.
* ``blend``: both lists, each cut at the threshold in its own (absolute) scale and taken BLEND_DEPTH
  deep, fused by relative-score fusion (core.knowledge.search.relative_score_fuse: min-max per list, scaled
  by the list's confidence (its best score over a clear match's), then 0.5 * vector + 0.5 * keywords),
  then cut at the threshold again on the fused score. Chosen by
  recall@5 on CMRC 2018 dev (tests/benchmarks/bench_kb.py): embedding 0.874, keywords 0.995, RRF
  (k=60) 0.974, relative-score 0.3 / 0.5 / 0.7 -> 0.996 / 0.995 / 0.947. RRF fell 2.1 points below
  keywords because it throws away how far ahead a list's top hit is.

A replacement upserts the new version's chunks, then flips the catalog entry (one write), then deletes
the old version's chunks; searches only show live versions, so old and new never mix.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import fields, replace

import numpy as np

from adapters.embedders.ahead import embedded_ahead
from adapters.knowledge.chroma import dataset as cd
from adapters.knowledge.chroma import keywords as ck
from adapters.knowledge.chroma import references as cr
from adapters.knowledge.chroma.catalog import CatalogEntry, document_version
from adapters.knowledge.chroma.maintenance import ChromaMaintenance
from adapters.knowledge.chroma.store import DEFAULT_FUSION, EmbedderFor
from core.errors import InvalidInput, KbError, NotFound
from core.knowledge.chunking import embedding_text
from core.knowledge.ingest_plan import TitledDocument
from core.knowledge.search import (
    clamp_limit,
    clamp_threshold,
    distinct_passages,
    fuse,
    merge_ranked,
    parse_mode,
)
from core.messages import phrase
from core.models import Chunk, DocumentInfo, Hit, SearchRequest
from core.ports import Embedder

_INFO_FIELDS = tuple(field.name for field in fields(DocumentInfo))

__all__ = ["DEFAULT_FUSION", "ChromaKnowledgeBase", "EmbedderFor"]
log = logging.getLogger(__name__)
BLEND_DEPTH = 30
COPIES_ROOM = 5  # searched beyond the limit so copies of a passage dropped from the results leave no gap


class ChromaKnowledgeBase(ChromaMaintenance):
    """Datasets as Chroma collections, searched by embedding, keywords or both (KnowledgeBase + DocumentIndex),
    with the maintenance of `kb datasets` (adapters.knowledge.chroma.maintenance)."""

    # ---------- KnowledgeBase ----------

    async def search(self, request: SearchRequest) -> list[Hit]:
        """Hits best first, at most request.limit, score >= request.threshold, disabled documents excluded."""
        if not request.datasets:
            return []
        query = request.query.strip()
        if not query:
            raise InvalidInput(phrase("error.empty_query"))
        mode = parse_mode(request.mode)
        limit = clamp_limit(request.limit)
        threshold = clamp_threshold(request.threshold)
        handles = []
        for name in dict.fromkeys(request.datasets):
            handle = await self._open(name)
            if handle is None:
                log.warning("search: dataset %r does not exist; skipped", name)
            else:
                handles.append(await self._fresh(handle))
        if not handles:
            return []
        if mode == "embedding":
            found = await self._vector_hits(handles, query, depth=limit + COPIES_ROOM, threshold=threshold)
            return distinct_passages(found)[:limit]
        if mode == "keywords":
            found = await self._keyword_hits(handles, query, depth=limit + COPIES_ROOM, threshold=threshold)
            return distinct_passages(found)[:limit]
        depth = max(BLEND_DEPTH, limit + COPIES_ROOM)
        vector, keyword = await asyncio.gather(
            self._vector_hits(handles, query, depth=depth, threshold=threshold),
            self._keyword_hits(handles, query, depth=depth, threshold=threshold),
        )
        fused = fuse(self._fusion, vector, keyword)
        return distinct_passages([hit for hit in fused if hit.score >= threshold])[:limit]

    async def _vector_hits(
        self, handles: Sequence[cd.DatasetHandle], query: str, *, depth: int, threshold: float
    ) -> list[Hit]:
        by_model: dict[str, list[cd.DatasetHandle]] = {}
        for handle in handles:
            by_model.setdefault(handle.model, []).append(handle)
        groups: list[list[Hit]] = []
        for model, members in by_model.items():
            vector = await self._embedders(model).embed_query(query)
            group: list[Hit] = []
            for handle in members:
                group.extend(
                    await self._run(cd.vector_hits, handle, vector, depth=depth, threshold=threshold)
                )
            groups.append(group)
        return merge_ranked(groups, limit=depth)

    async def _keyword_hits(
        self, handles: Sequence[cd.DatasetHandle], query: str, *, depth: int, threshold: float
    ) -> list[Hit]:
        found: list[Hit] = []
        for handle in handles:
            async with self._keyword_lock(handle):
                await self._index_missing_keywords(handle)
                hits = await self._run(ck.search_keywords, handle, query, depth=depth, threshold=threshold)
            found.extend(hits)
        return merge_ranked([found], limit=depth)

    async def referenced(
        self, evidence: Sequence[Hit], *, query: str, datasets: Sequence[str], limit: int
    ) -> list[Hit]:
        """Paragraphs the evidence refers to: articles it cites, documents it names by title or mentions
        (adapters.knowledge.chroma.references), scored by similarity to the query; none of the evidence."""
        if not evidence or limit <= 0:
            return []
        exclude = {hit.id for hit in evidence}
        found: list[Hit] = []
        for name in dict.fromkeys(datasets):
            handle = await self._open(name)
            if handle is None or not any(hit.dataset == name for hit in evidence):
                continue
            handle = await self._fresh(handle)
            index = self._title_index(handle)
            targets = await self._run(cr.targets, handle, index, evidence)
            if not targets:
                continue
            vector = np.asarray(await self._embedders(handle.model).embed_query(query), dtype=np.float32)
            found.extend(
                await self._run(
                    cr.target_hits, handle, targets, vector, exclude=exclude, limit=limit - len(found)
                )
            )
            if len(found) >= limit:
                break
        return found[:limit]

    def _title_index(self, handle: cd.DatasetHandle) -> cr.TitleIndex:
        """The dataset's title index, rebuilt when its catalog changed."""
        cached = self._title_indexes.get(handle.name)
        if cached is None or cached[0] != handle.catalog.generation:
            cached = (handle.catalog.generation, cr.TitleIndex.of(handle.catalog.entries()))
            self._title_indexes[handle.name] = cached
        return cached[1]

    # ---------- DocumentIndex ----------

    async def paragraph_texts(self, dataset: str, ids: Sequence[str]) -> dict[str, str]:
        """The stored text of these paragraphs of a dataset, by id (unknown ids and datasets: left out)."""
        handle = await self._open(dataset)
        if handle is None or not ids:
            return {}
        return await self._run(cd.paragraph_texts, handle, list(ids), for_dataset=dataset)

    async def list_documents(self, dataset: str) -> list[DocumentInfo]:
        """Documents of a dataset ordered by name ([] when the dataset does not exist)."""
        handle = await self._open(dataset)
        if handle is None:
            return []
        handle = await self._fresh(handle)
        return [entry.info for entry in handle.catalog.entries()]

    async def list_titled_documents(self, dataset: str) -> list[TitledDocument]:
        """list_documents with each document's own title (as read at ingest; "" when it had none)."""
        handle = await self._open(dataset)
        if handle is None:
            return []
        handle = await self._fresh(handle)
        return [
            TitledDocument(**{name: getattr(entry.info, name) for name in _INFO_FIELDS}, title=entry.title)
            for entry in handle.catalog.entries()
        ]

    async def replace_document(
        self, dataset: str, document: DocumentInfo, chunks: Sequence[Chunk], *, embedding_model: str
    ) -> None:
        """Replace a document's chunks: upsert the new version, flip the catalog, delete the old version."""
        await self.replace_documents(dataset, [(document, chunks)], embedding_model=embedding_model)

    async def replace_documents(
        self,
        dataset: str,
        items: Sequence[tuple[DocumentInfo, Sequence[Chunk]]],
        *,
        embedding_model: str,
        keywords: Sequence[Sequence[str]] | None = None,
        on_written: Callable[[int], object] | None = None,
    ) -> list[int]:
        """replace_document for several documents, with large upserts and one catalog flip.

        A chunk whose embedding text (title, headings, text) is unchanged keeps its stored vector:
        only new or changed chunks are embedded (a content hash per chunk, in its metadata). Chunks are
        embedded and upserted WRITE_BATCH at a time, and on_written(n) is called after each upsert, so
        a big document shows progress. Upserting hundreds of chunks per call instead of one document's
        dozens is ~3x cheaper in Chroma (measured: 50 -> ~740, 500 -> ~2060 records per CPU-second).
        Every document's new chunks are written before the single catalog write that makes them all
        live. keywords: each item's chunk terms from self.chunk_keywords, already computed (by
        ingestion's worker); else tokenised here. Returns, per item, how many chunks kept their vector.
        """
        if not items:
            return []
        handle = await self._open(dataset)
        if handle is not None:
            self._check_model(handle, embedding_model)
        titles = [str(getattr(document, "title", "") or document.name) for document, _ in items]
        texts = [
            embedding_text(chunk, document_title=title)
            for (_, chunks), title in zip(items, titles, strict=True)
            for chunk in chunks
        ]
        hashes = [cd.chunk_hash(text) for text in texts]
        kept = await self._kept_vectors(handle, [document.document_id for document, _ in items])
        records = [
            cd.chunk_records(document, chunks, version=document_version(document.content_hash))
            for document, chunks in items
        ]
        ids = [chunk_id for record in records for chunk_id in record.ids]
        metadatas = [meta for record in records for meta in record.metadatas]
        for meta, digest in zip(metadatas, hashes, strict=True):
            meta[cd.HASH_KEY] = digest
        given = _given_keywords(items, keywords)
        # jieba runs beside the Chroma writes (in a worker process for large batches: embedded Chroma
        # holds the GIL while it writes, so a thread could not overlap with it).
        tokenising = asyncio.ensure_future(self._tokenise(texts)) if given is None else None
        embedder = self._embedders(embedding_model)

        def embedding(start: int, end: int) -> Awaitable[np.ndarray]:
            return _vectors(embedder, texts[start:end], hashes[start:end], kept)

        try:
            async with contextlib.aclosing(embedded_ahead(len(ids), self._write_batch, embedding)) as batches:
                async for start, end, vectors in batches:
                    if handle is None:
                        handle = await self._create(dataset, embedding_model, int(vectors.shape[1]))
                    await self._run(
                        cd.write_chunks,
                        handle,
                        ids[start:end],
                        vectors,
                        metadatas[start:end],
                        batch=len(vectors),
                    )
                    if on_written is not None:
                        on_written(len(vectors))
            if handle is None:  # documents without chunks: the dataset still comes into being
                handle = await self._create(dataset, embedding_model, await _dimension_of(embedder))
        except BaseException:
            if tokenising is not None:
                tokenising.cancel()
            raise
        now = time.time()
        entries: list[CatalogEntry] = []
        stale: list[str] = []
        replaced: list[tuple[str, str]] = []
        for (document, chunks), title, record in zip(items, titles, records, strict=True):
            old = handle.catalog.get(document.document_id)
            enabled = old.info.enabled if old is not None else document.enabled
            info = replace(
                document, dataset=dataset, chunk_count=len(chunks), enabled=enabled, updated_at=now
            )
            entries.append(CatalogEntry(info=info, version=record.version, title=title))
            if old is not None and old.version != record.version:
                stale.extend(old.live_ids)
                replaced.append((document.document_id, record.version))
        terms = await tokenising if tokenising is not None else given
        tokenised = list(zip(ids, terms or [], strict=True))
        async with self._keyword_lock(handle):  # the moment the new versions go live
            await self._index_missing_keywords(handle)
            await self._run(ck.commit_documents, handle, entries, stale, tokenised)
        for document_id, version in replaced:
            await self._run(cd.delete_other_versions, handle, document_id, version)
        reused = []
        offset = 0
        for _, chunks in items:
            reused.append(sum(1 for digest in hashes[offset : offset + len(chunks)] if digest in kept))
            offset += len(chunks)
        return reused

    async def _kept_vectors(
        self, handle: cd.DatasetHandle | None, document_ids: Sequence[str]
    ) -> dict[str, np.ndarray]:
        """Stored vectors of these documents' live chunks by content hash (what need not be embedded)."""
        if handle is None:
            return {}
        entries = [entry for entry in map(handle.catalog.get, document_ids) if entry is not None]
        if not entries:
            return {}
        return await self._run(cd.vectors_by_hash, handle, entries)

    async def _entry(self, dataset: str, document_id: str) -> tuple[cd.DatasetHandle, CatalogEntry]:
        handle = await self._open(dataset)
        entry = None if handle is None else (await self._fresh(handle)).catalog.get(document_id)
        if handle is None or entry is None:
            raise NotFound(phrase("error.no_such_document", dataset=dataset, document_id=document_id))
        return handle, entry

    async def delete_document(self, dataset: str, document_id: str) -> int:
        """Delete a document and its chunks; returns the number of chunks removed."""
        handle, entry = await self._entry(dataset, document_id)
        async with self._keyword_lock(handle):  # hidden from searches from here on
            await self._index_missing_keywords(handle)
            await self._run(ck.forget_document, handle, entry)
        await self._run(cd.delete_other_versions, handle, document_id, None)
        return entry.info.chunk_count

    async def set_enabled(self, dataset: str, document_id: str, enabled: bool) -> None:
        """Enable or disable a document (disabled documents never appear in any search)."""
        handle, _ = await self._entry(dataset, document_id)
        await self._run(handle.catalog.set_enabled, document_id, enabled, for_dataset=dataset)


def _given_keywords(
    items: Sequence[tuple[DocumentInfo, Sequence[Chunk]]], keywords: Sequence[Sequence[str]] | None
) -> list[str] | None:
    """The given keyword terms flattened in chunk order; None when absent (or not one per chunk)."""
    if keywords is None or len(keywords) != len(items):
        return None
    if any(len(terms) != len(chunks) for terms, (_, chunks) in zip(keywords, items, strict=True)):
        return None
    return [term for terms in keywords for term in terms]


async def _vectors(
    embedder: Embedder, texts: Sequence[str], hashes: Sequence[str], kept: dict[str, np.ndarray]
) -> np.ndarray:
    """One vector per text: the kept one when its hash is known, else embedded (one call for the rest)."""
    missing = [index for index, digest in enumerate(hashes) if digest not in kept]
    fresh = await embedder.embed_documents([texts[i] for i in missing]) if missing else []
    by_index = dict(zip(missing, fresh, strict=True))
    rows = [by_index[i] if i in by_index else kept[hashes[i]] for i in range(len(texts))]
    return np.asarray(rows, dtype=np.float32)


async def _dimension_of(embedder: Embedder) -> int:
    try:
        return int(embedder.dimension)
    except KbError:
        return len(await embedder.embed_query("dimension probe"))
