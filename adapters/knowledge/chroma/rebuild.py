"""Rebuilding a dataset from its stored chunks into fresh collections, swapping them in, and dropping a dataset.

Chroma keeps each chunk's text in its record (adapters.knowledge.chroma.dataset.TEXT_KEY, or the
Chroma document for older chunks), so a dataset whose vector index is damaged can be re-embedded
without its source files: the store reads the live chunks the catalog lists (stored_documents), embeds
them again into new collections named ``<name>.rebuild`` (start_rebuild, write_rebuilt), and
swap_in renames the old pair aside (``.old``), the new pair into place, and deletes the old pair. The
catalog is the source of truth: records no live version vouches for are left behind, and a document
whose chunks are no longer all stored is dropped (its file must be ingested again). Every function
blocks: the store runs them through its access (embedded Chroma: inside one cross-process call each,
so no other process sees a half-swapped dataset).
"""

from __future__ import annotations

import contextlib
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
    collection_name,
)
from adapters.knowledge.chroma.dataset import (
    HASH_KEY,
    HEADING_JOINER,
    HNSW_CONFIGURATION,
    TEXT_KEY,
    WRITE_BATCH,
    DatasetHandle,
    chunk_hash,
    chunk_text,
)
from core.knowledge.chunking import embedding_text
from core.models import Chunk

REBUILD_SUFFIX = ".rebuild"
REPLACED_SUFFIX = ".old"
REBUILDING_KIND = "kb-rebuilding"


@dataclass(frozen=True, slots=True)
class StoredDocument:
    """A live document version read back from Chroma: its catalog entry and its chunk records, in order."""

    entry: CatalogEntry
    ids: list[str]
    metadatas: list[dict[str, Any]]
    texts: list[str]  # the embedding text of each chunk (title, headings, text)


@dataclass(frozen=True, slots=True)
class RebuildReport:
    """What `kb datasets rebuild` did."""

    name: str
    model: str
    documents: int
    chunks: int
    dropped: tuple[str, ...]  # documents left out: some of their chunks were no longer stored
    seconds: float = 0.0


def stored_documents(handle: DatasetHandle) -> tuple[list[StoredDocument], list[CatalogEntry]]:
    """The catalog's live documents with their stored chunks, and the entries whose chunks are incomplete."""
    handle.catalog.refresh()
    complete: list[StoredDocument] = []
    incomplete: list[CatalogEntry] = []
    for entry in handle.catalog.entries():
        wanted = entry.live_ids
        found: dict[str, tuple[dict[str, Any], str | None]] = {}
        for start in range(0, len(wanted), WRITE_BATCH):
            got = handle.collection.get(
                ids=wanted[start : start + WRITE_BATCH], include=["metadatas", "documents"]
            )
            documents = got["documents"] or [None] * len(got["ids"])
            for chunk_id, meta, document in zip(got["ids"], got["metadatas"], documents, strict=True):
                found[chunk_id] = (dict(meta or {}), document)
        if len(found) < len(wanted):
            incomplete.append(entry)
            continue
        metadatas, texts = [], []
        for chunk_id in wanted:
            meta, document = found[chunk_id]
            heading = str(meta.get("heading", ""))
            chunk = Chunk(
                chunk_text(document, meta),
                tuple(heading.split(HEADING_JOINER)) if heading else (),
                int(meta.get("position", 0)),
                0,
            )
            text = embedding_text(chunk, document_title=entry.title or entry.info.name)
            meta[HASH_KEY] = chunk_hash(text)
            meta.setdefault(TEXT_KEY, chunk.text)
            metadatas.append(meta)
            texts.append(text)
        complete.append(StoredDocument(entry, list(wanted), metadatas, texts))
    return complete, incomplete


def _delete_if_present(client: Any, name: str) -> None:
    with contextlib.suppress(Exception):  # NotFoundError, or ValueError in older clients
        client.delete_collection(name)


def start_rebuild(client: Any, dataset: str, *, model: str, dimension: int) -> None:
    """Empty new chunk and catalog collections for the dataset (leftovers of an interrupted rebuild removed).

    The writes that follow look them up by name in each call (a reopened embedded client cannot use
    collection objects of the one before).
    """
    chunks_name = collection_name(dataset) + REBUILD_SUFFIX
    catalog_collection_name = catalog_name(dataset) + REBUILD_SUFFIX
    for name in (chunks_name, catalog_collection_name):
        _delete_if_present(client, name)
    client.create_collection(
        chunks_name,
        embedding_function=None,
        configuration=HNSW_CONFIGURATION,
        metadata={
            "kind": REBUILDING_KIND,
            "dataset": dataset,
            "embedding_model": model,
            "dimension": dimension,
        },
    )
    client.create_collection(
        catalog_collection_name,
        embedding_function=None,
        metadata={"kind": REBUILDING_KIND, "dataset": dataset},
    )


def write_rebuilt(
    client: Any, dataset: str, ids: Sequence[str], vectors: np.ndarray, metadatas: Sequence[dict[str, Any]]
) -> None:
    """Upsert re-embedded chunk records into the new chunk collection."""
    collection = client.get_collection(collection_name(dataset) + REBUILD_SUFFIX, embedding_function=None)
    collection.upsert(ids=list(ids), embeddings=vectors, metadatas=list(metadatas))


def write_rebuilt_catalog(client: Any, dataset: str, entries: Sequence[CatalogEntry]) -> None:
    """The kept documents' entries, unchanged, into the new catalog collection."""
    collection = client.get_collection(catalog_name(dataset) + REBUILD_SUFFIX, embedding_function=None)
    Catalog(dataset, collection).put_many(list(entries))


def swap_in(client: Any, dataset: str, *, model: str, dimension: int, created: float) -> None:
    """Replace the dataset's collections with the rebuilt ones: old pair aside, new pair in, old pair deleted."""
    pairs = (
        (
            collection_name(dataset),
            {
                "kind": DATASET_KIND,
                "dataset": dataset,
                "embedding_model": model,
                "dimension": dimension,
                "created": created,
            },
        ),
        (catalog_name(dataset), {"kind": CATALOG_KIND, "dataset": dataset}),
    )
    for name, _ in pairs:
        _delete_if_present(client, name + REPLACED_SUFFIX)
        try:
            old = client.get_collection(name, embedding_function=None)
        except Exception:
            continue  # already gone
        try:
            old.modify(name=name + REPLACED_SUFFIX, metadata={"kind": "kb-replaced", "dataset": dataset})
        except Exception:
            _delete_if_present(client, name)  # a collection too broken to rename is deleted at once
    for name, metadata in pairs:
        client.get_collection(name + REBUILD_SUFFIX, embedding_function=None).modify(
            name=name, metadata=metadata
        )
    for name, _ in pairs:
        _delete_if_present(client, name + REPLACED_SUFFIX)


def drop(client: Any, dataset: str) -> None:
    """Delete the dataset's collections (and any a rebuild left behind)."""
    for base in (collection_name(dataset), catalog_name(dataset)):
        for suffix in ("", REBUILD_SUFFIX, REPLACED_SUFFIX):
            _delete_if_present(client, base + suffix)


def created_at(handle: DatasetHandle) -> float:
    """When the dataset was first created (kept across rebuilds)."""
    return float(dict(handle.collection.metadata or {}).get("created", time.time()))
