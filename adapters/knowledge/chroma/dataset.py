"""One dataset in Chroma: its collections, chunk records, and the vector reads a search makes.

(Its keyword side, BM25 kept in step with the catalog, is adapters.knowledge.chroma.keywords.)

A dataset is a chunk collection (cosine HNSW, ef_search 400, embedding_function=None, metadata with
the embedding model and dimension) plus its catalog collection (adapters.knowledge.chroma.catalog). Chunk ids are
``<document id>:<version>:<index>``; a hit counts only while the catalog says its version is live and
its document is enabled, so replacements never show old and new chunks together and disabled documents
never show. Those checks are post-filters with over-fetch (a low-selectivity ``where`` costs ~150 ms at
100k chunks, docs/storage.md#filters-are-slow-so-searches-over-fetch-and-filter-afterwards).
Every function here blocks: callers run them in worker threads.

A chunk's text is stored in its metadata (TEXT_KEY), not as the Chroma document: local Chroma puts every
document into a trigram full-text index (which this knowledge base never queries: keyword search is
BM25 beside Chroma), and that index was half the cost of an upsert (10k chunks of ~230 Chinese
characters: 7.1 s with documents, 4.1 s with the text in metadata). Chunks written as documents by
earlier versions are still read.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from adapters.knowledge.chroma.catalog import (
    CATALOG_KIND,
    DATASET_KIND,
    Catalog,
    CatalogEntry,
    catalog_name,
    chunk_ids,
    collection_name,
)
from adapters.knowledge.keywords.index import KeywordIndex
from core.knowledge.chunking import embedding_text
from core.models import Chunk, DocumentInfo, Hit, Location

HNSW_CONFIGURATION = {"hnsw": {"space": "cosine", "ef_search": 400}}
# Embedded Chroma holds the GIL for a whole upsert (measured: no other thread ran during a 1.2 s upsert
# of 2000 records), so the batch bounds how long a write stalls the event loop: 512 records ~0.4 s.
# Throughput per CPU-second: 128 -> ~840/s, 512 -> ~1200/s, 1000 and 5000 -> ~1290/s.
WRITE_BATCH = 512
FETCH_SLACK = 8
HEADING_JOINER = " > "
TEXT_KEY = "text"
HASH_KEY = "hash"  # sha1 of the chunk's embedding text: an unchanged chunk keeps its vector on re-ingest


@dataclass
class DatasetHandle:
    """An opened dataset: collections, catalog, model and its keyword index."""

    name: str
    collection: Any
    catalog: Catalog
    model: str
    dimension: int
    keywords: KeywordIndex
    keywords_synced: bool = False


def open_dataset(client: Any, name: str, keywords: KeywordIndex) -> DatasetHandle | None:
    """The dataset if it exists (catalog loaded), else None."""
    import chromadb.errors

    try:
        collection = client.get_collection(collection_name(name), embedding_function=None)
    except (chromadb.errors.NotFoundError, ValueError):
        return None
    return _handle(client, name, collection, keywords)


def create_dataset(
    client: Any, name: str, *, model: str, dimension: int, keywords: KeywordIndex
) -> DatasetHandle:
    """Create (or open, if another writer just did) the dataset for this embedding model."""
    metadata = {
        "kind": DATASET_KIND,
        "dataset": name,
        "embedding_model": model,
        "dimension": dimension,
        "created": time.time(),
    }
    collection = client.get_or_create_collection(
        collection_name(name),
        embedding_function=None,
        configuration=HNSW_CONFIGURATION,
        metadata=metadata,
    )
    return _handle(client, name, collection, keywords)


def _handle(client: Any, name: str, collection: Any, keywords: KeywordIndex) -> DatasetHandle:
    meta = dict(collection.metadata or {})
    catalog_collection = client.get_or_create_collection(
        catalog_name(name), embedding_function=None, metadata={"kind": CATALOG_KIND, "dataset": name}
    )
    catalog = Catalog(name, catalog_collection)
    catalog.refresh()
    return DatasetHandle(
        name=name,
        collection=collection,
        catalog=catalog,
        model=str(meta.get("embedding_model", "")),
        dimension=int(meta.get("dimension", 0)),
        keywords=keywords,
    )


def rebind(client: Any, handle: DatasetHandle) -> bool:
    """Point an opened dataset at a new client's collections and reload its catalog; False when it is gone.

    After embedded Chroma is reopened (adapters.knowledge.chroma.access); the keyword index is kept and
    catches up with the reloaded catalog at its next use.
    """
    import chromadb.errors

    try:
        collection = client.get_collection(collection_name(handle.name), embedding_function=None)
        catalog_collection = client.get_collection(catalog_name(handle.name), embedding_function=None)
    except (chromadb.errors.NotFoundError, ValueError):
        return False
    meta = dict(collection.metadata or {})
    handle.collection = collection
    handle.model = str(meta.get("embedding_model", ""))
    handle.dimension = int(meta.get("dimension", 0))
    handle.catalog.rebind(catalog_collection)
    handle.catalog.refresh()
    return True


def refresh_or_rebind(client: Any, handle: DatasetHandle) -> None:
    """Reload the catalog; when its collection is gone (another process rebuilt the dataset), rebind by name."""
    try:
        handle.catalog.refresh()
    except Exception:
        if not rebind(client, handle):
            raise


def list_dataset_names(client: Any) -> list[str]:
    """Names of every dataset this knowledge base created, sorted."""
    names = []
    for collection in client.list_collections():
        meta = collection.metadata or {}
        if meta.get("kind") == DATASET_KIND and meta.get("dataset"):
            names.append(str(meta["dataset"]))
    return sorted(set(names))


@dataclass(frozen=True, slots=True)
class ChunkRecords:
    """The Chroma records of one document version: ids and metadata (text included), in chunk order."""

    version: str
    ids: list[str]
    metadatas: list[dict[str, Any]]


def chunk_records(document: DocumentInfo, chunks: Sequence[Chunk], *, version: str) -> ChunkRecords:
    """Records for a document's chunks; per-document fields (name, source, title) live in the catalog.

    Five small metadata keys (the text among them, see the module docstring) instead of nine made
    writes ~12 % cheaper (measured); a chunk with a location (page, slide, sheet, rows) adds only the
    keys it has (core.models.Location.to_dict).
    """
    metadatas: list[dict[str, Any]] = [
        {
            "document_id": document.document_id,
            "version": version,
            "position": index,
            "heading": HEADING_JOINER.join(chunk.heading_path),
            TEXT_KEY: chunk.text,
            **chunk.location.to_dict(),
        }
        for index, chunk in enumerate(chunks)
    ]
    ids = chunk_ids(document.document_id, version, len(chunks))
    return ChunkRecords(version, ids, metadatas)


def chunk_hash(embedding_text: str) -> str:
    """The content hash of a chunk: of exactly the text that is embedded (title, headings, text)."""
    return hashlib.sha1(embedding_text.encode("utf-8")).hexdigest()


def vectors_by_hash(handle: DatasetHandle, entries: Sequence[CatalogEntry]) -> dict[str, np.ndarray]:
    """The stored vectors of these documents' live chunks, by content hash.

    Chunks written before hashes were stored get theirs from their text, heading and the document
    title (the embedding text they were embedded from); a rebuilt text that differs only costs a
    re-embedding, never a wrong vector.
    """
    kept: dict[str, np.ndarray] = {}
    for entry in entries:
        ids = entry.live_ids
        for start in range(0, len(ids), WRITE_BATCH):
            got = handle.collection.get(
                ids=ids[start : start + WRITE_BATCH], include=["embeddings", "metadatas", "documents"]
            )
            for vector, meta, document in zip(
                got["embeddings"], got["metadatas"], got["documents"] or [None] * len(got["ids"]), strict=True
            ):
                meta = dict(meta or {})
                digest = meta.get(HASH_KEY)
                if not digest:
                    heading = str(meta.get("heading", ""))
                    chunk = Chunk(
                        chunk_text(document, meta),
                        tuple(heading.split(HEADING_JOINER)) if heading else (),
                        int(meta.get("position", 0)),
                        0,
                    )
                    digest = chunk_hash(embedding_text(chunk, document_title=entry.title or entry.info.name))
                kept[str(digest)] = np.asarray(vector, dtype=np.float32)
    return kept


def chunk_text(document: str | None, meta: dict[str, Any]) -> str:
    """A stored chunk's text: from its metadata, or its Chroma document (chunks written before)."""
    text = meta.get(TEXT_KEY)
    return str(text) if text is not None else document or ""


def paragraph_texts(handle: DatasetHandle, ids: Sequence[str]) -> dict[str, str]:
    """The stored text of the paragraphs with these ids (ids the dataset does not hold are left out)."""
    got = handle.collection.get(ids=list(ids), include=["metadatas", "documents"])
    documents = got["documents"] or [None] * len(got["ids"])
    metas = got["metadatas"] or [None] * len(got["ids"])
    return {
        str(pid): chunk_text(document, dict(meta or {}))
        for pid, meta, document in zip(got["ids"], metas, documents, strict=True)
    }


def write_chunks(
    handle: DatasetHandle,
    ids: Sequence[str],
    vectors: np.ndarray,
    metadatas: Sequence[dict[str, Any]],
    *,
    batch: int = WRITE_BATCH,
) -> None:
    """Upsert chunk records in batches (well under Chroma's maximum of 5461)."""
    for start in range(0, len(ids), batch):
        end = start + batch
        handle.collection.upsert(
            ids=list(ids[start:end]), embeddings=vectors[start:end], metadatas=list(metadatas[start:end])
        )


def delete_other_versions(handle: DatasetHandle, document_id: str, keep_version: str | None) -> None:
    """Delete a document's chunks except keep_version's (all of them when keep_version is None)."""
    if keep_version is None:
        handle.collection.delete(where={"document_id": document_id})
    else:
        handle.collection.delete(
            where={"$and": [{"document_id": document_id}, {"version": {"$ne": keep_version}}]}
        )


def live_entry(handle: DatasetHandle, meta: dict[str, Any]) -> CatalogEntry | None:
    """The catalog entry vouching for a chunk: its document enabled and its version live; else None."""
    entry = handle.catalog.get(str(meta.get("document_id", "")))
    if entry is None or not entry.info.enabled or entry.version != meta.get("version"):
        return None
    return entry


def visible_hit(
    entry: CatalogEntry, chunk_id: str, document: str | None, meta: dict[str, Any], score: float
) -> Hit:
    return Hit(
        id=chunk_id,
        content=chunk_text(document, meta),
        score=score,
        dataset=entry.info.dataset,
        document_id=entry.info.document_id,
        document_name=entry.info.name,
        heading=str(meta.get("heading", "")),
        source=entry.info.link or entry.info.source,
        position=int(meta.get("position", 0)),
        location=Location.from_dict(meta),
        title=entry.title or entry.info.name,
    )


def over_fetch_depth(handle: DatasetHandle, depth: int) -> int:
    return depth + handle.catalog.hidden_chunks() + FETCH_SLACK


def vector_hits(handle: DatasetHandle, vector: Sequence[float], *, depth: int, threshold: float) -> list[Hit]:
    """Up to depth visible hits with similarity 1 - cosine distance >= threshold, best first.

    A replacement may go live while the query runs (it flips the catalog, then deletes the old chunks): the
    chunks found would then be judged by a catalog they were not fetched under, and a search could see
    neither version. So a query during which the catalog changed is run again (a few times at most).
    """
    for _ in range(CATALOG_CHANGE_RETRIES):
        before = handle.catalog.generation
        hits = _vector_hits_once(handle, vector, depth=depth, threshold=threshold)
        if handle.catalog.generation == before:
            return hits
    return hits


CATALOG_CHANGE_RETRIES = 4


def _vector_hits_once(
    handle: DatasetHandle, vector: Sequence[float], *, depth: int, threshold: float
) -> list[Hit]:
    k = over_fetch_depth(handle, depth)
    query = np.asarray([vector], dtype=np.float32)
    while True:
        got = handle.collection.query(
            query_embeddings=query, n_results=k, include=["documents", "metadatas", "distances"]
        )
        ids, docs, metas, dists = got["ids"][0], got["documents"][0], got["metadatas"][0], got["distances"][0]
        hits: list[Hit] = []
        below = False
        for chunk_id, document, meta, distance in zip(ids, docs, metas, dists, strict=True):
            score = 1.0 - float(distance)
            if score < threshold:
                below = True
                break
            entry = live_entry(handle, dict(meta or {}))
            if entry is not None:
                hits.append(visible_hit(entry, chunk_id, document, dict(meta or {}), score))
        if len(hits) >= depth or below or len(ids) < k:
            return hits[:depth]
        k *= 2  # stale versions took places: fetch deeper
