"""Dataset naming and the document catalog: one small companion Chroma collection per dataset.

The catalog holds one record per document (id = document id; metadata name, source, hash, version,
enabled, chunks, updated, title) with a one-dimensional dummy vector, because every Chroma record needs
an embedding. Keeping it in Chroma makes embedded and server mode behave the same and keeps a document
and its chunks in one store. The catalog is the source of truth for which chunk version of a document
is live and whether it is enabled; searches drop every hit the catalog does not vouch for.

All functions here are synchronous Chroma calls: the knowledge base runs them in worker threads.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from core.models import DocumentInfo

DATASET_KIND = "kb-dataset"
CATALOG_KIND = "kb-catalog"
_SLUG_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]+")
_DUMMY_VECTOR = [1.0]


def _base_name(dataset: str) -> str:
    digest = hashlib.sha1(dataset.encode("utf-8")).hexdigest()[:10]
    slug = _SLUG_UNSAFE.sub("-", dataset).strip("-_")[:48]
    return f"{slug}-{digest}" if slug else digest


def collection_name(dataset: str) -> str:
    """The chunk collection of a dataset: valid for Chroma (3-512 of [a-zA-Z0-9._-]) for any name."""
    return f"kb-{_base_name(dataset)}"


def catalog_name(dataset: str) -> str:
    """The catalog collection of a dataset."""
    return f"kbcat-{_base_name(dataset)}"


def document_version(content_hash: str) -> str:
    """The chunk version of a document: derived from its content fingerprint, so it changes with it."""
    return hashlib.sha1(content_hash.encode("utf-8")).hexdigest()[:12]


def chunk_ids(document_id: str, version: str, count: int) -> list[str]:
    """The ids of a document version's chunks: document id, version, index."""
    return [f"{document_id}:{version}:{index}" for index in range(count)]


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """One document of a dataset as the catalog records it."""

    info: DocumentInfo
    version: str
    title: str = ""

    @property
    def live_ids(self) -> list[str]:
        """Ids of the chunks a search may return for this document."""
        return chunk_ids(self.info.document_id, self.version, self.info.chunk_count)


def _entry_metadata(entry: CatalogEntry) -> dict[str, Any]:
    info = entry.info
    return {
        "name": info.name,
        "source": info.source,
        "hash": info.content_hash,
        "version": entry.version,
        "enabled": info.enabled,
        "chunks": info.chunk_count,
        "updated": info.updated_at,
        "title": entry.title,
        "link": info.link,
    }


def _entry_from(dataset: str, document_id: str, meta: dict[str, Any]) -> CatalogEntry:
    info = DocumentInfo(
        dataset=dataset,
        document_id=document_id,
        name=str(meta.get("name", "")),
        source=str(meta.get("source", "")),
        content_hash=str(meta.get("hash", "")),
        enabled=bool(meta.get("enabled", True)),
        chunk_count=int(meta.get("chunks", 0)),
        updated_at=float(meta.get("updated", 0.0)),
        link=str(meta.get("link", "")),
    )
    return CatalogEntry(info=info, version=str(meta.get("version", "")), title=str(meta.get("title", "")))


class Catalog:
    """The documents of one dataset, cached in process and written through to Chroma."""

    def __init__(self, dataset: str, collection: Any) -> None:
        self.dataset = dataset
        self._collection = collection
        self._entries: dict[str, CatalogEntry] = {}
        self._signature: str | None = None
        self.loaded_at = 0.0
        self.generation = 0  # counts changes, so a reader in another thread can tell one happened

    def rebind(self, collection: Any) -> None:
        """Use this collection from now on (the same catalog through a reopened client); refresh() reloads."""
        self._collection = collection

    def refresh(self) -> None:
        """Reload every entry from Chroma (a few ms for hundreds of documents)."""
        entries: dict[str, CatalogEntry] = {}
        page = 5000
        offset = 0
        while True:
            got = self._collection.get(include=["metadatas"], limit=page, offset=offset)
            for document_id, meta in zip(got["ids"], got["metadatas"] or [], strict=False):
                entries[document_id] = _entry_from(self.dataset, document_id, dict(meta or {}))
            if len(got["ids"]) < page:
                break
            offset += page
        self._entries = entries
        self._signature = None
        self.generation += 1
        self.loaded_at = time.monotonic()

    def entries(self) -> list[CatalogEntry]:
        """All documents, ordered by name then id."""
        return sorted(self._entries.values(), key=lambda e: (e.info.name, e.info.document_id))

    def get(self, document_id: str) -> CatalogEntry | None:
        return self._entries.get(document_id)

    def put(self, entry: CatalogEntry) -> None:
        """Write one entry (a single upsert: this is the moment a new chunk version goes live)."""
        self.put_many([entry])

    def put_many(self, entries: Sequence[CatalogEntry]) -> None:
        """Write several entries in one upsert (each document's new version goes live with it)."""
        if not entries:
            return
        self._collection.upsert(
            ids=[entry.info.document_id for entry in entries],
            embeddings=[_DUMMY_VECTOR] * len(entries),
            metadatas=[_entry_metadata(entry) for entry in entries],
        )
        for entry in entries:
            self._entries[entry.info.document_id] = entry
        self._signature = None
        self.generation += 1

    def set_enabled(self, document_id: str, enabled: bool) -> CatalogEntry | None:
        """Flip a document's enabled flag; None when the document is unknown."""
        entry = self._entries.get(document_id)
        if entry is None:
            return None
        updated = replace(entry, info=replace(entry.info, enabled=enabled, updated_at=time.time()))
        self.put(updated)
        return updated

    def remove(self, document_id: str) -> None:
        self._collection.delete(ids=[document_id])
        self._entries.pop(document_id, None)
        self._signature = None
        self.generation += 1

    def hidden_chunks(self) -> int:
        """Chunks stored for disabled documents (searches over-fetch by this many)."""
        return sum(e.info.chunk_count for e in self._entries.values() if not e.info.enabled)

    def signature(self) -> str:
        """A fingerprint of every document's live version (the keyword index records what it matches)."""
        if self._signature is None:
            parts = sorted(
                f"{e.info.document_id}:{e.version}:{e.info.chunk_count}" for e in self._entries.values()
            )
            self._signature = hashlib.sha1("\n".join(parts).encode("utf-8")).hexdigest()
        return self._signature

    def all_live_ids(self) -> Iterable[str]:
        """Every live chunk id, enabled or not (the keyword index covers disabled documents too)."""
        for entry in self._entries.values():
            yield from entry.live_ids
