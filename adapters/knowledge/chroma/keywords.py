"""A dataset's keyword side: its BM25 index kept in step with the catalog, repaired from Chroma, searched.

The segments live in adapters.knowledge.keywords; this module ties them to a dataset: it loads the
saved index once, takes what another process saved when the catalog has moved on, aligns it with the
live chunk ids of the catalog (reading missing texts back from Chroma), makes held changes searchable
when searched, and applies document changes at the moment the catalog flips. Every function here
blocks: callers run them in worker threads, under the dataset's keyword lock.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from adapters.knowledge.chroma.catalog import CatalogEntry
from adapters.knowledge.chroma.dataset import (
    HEADING_JOINER,
    DatasetHandle,
    chunk_text,
    live_entry,
    over_fetch_depth,
    visible_hit,
)
from core.knowledge.chunking import embedding_text
from core.knowledge.search import bm25_half_for, normalise_bm25
from core.models import Chunk, Hit


def _text_for_index(handle: DatasetHandle, document: str | None, meta: dict[str, Any]) -> str:
    heading = str(meta.get("heading") or "")
    path = tuple(heading.split(HEADING_JOINER)) if heading else ()
    chunk = Chunk(
        text=chunk_text(document, meta), heading_path=path, position=int(meta.get("position", 0)), tokens=0
    )
    entry = handle.catalog.get(str(meta.get("document_id", "")))
    title = (entry.title or entry.info.name) if entry is not None else ""
    return embedding_text(chunk, document_title=title)


def fetch_index_texts(handle: DatasetHandle, ids: Sequence[str]) -> dict[str, str]:
    """Embedding texts (title, headings, text) of stored chunks, to rebuild a keyword index from Chroma."""
    got = handle.collection.get(ids=list(ids), include=["documents", "metadatas"])
    return {
        chunk_id: _text_for_index(handle, document, dict(meta or {}))
        for chunk_id, document, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True)
    }


def keyword_hits(handle: DatasetHandle, query: str, *, depth: int, threshold: float) -> list[Hit]:
    """Up to depth visible BM25 hits, scored normalise_bm25(raw) >= threshold (never 0), best first."""
    k = over_fetch_depth(handle, depth)
    half = bm25_half_for(len(handle.keywords))  # a small dataset's idfs are small (core.knowledge.search)
    while True:
        pairs = handle.keywords.search(query, k)
        scored = [
            (chunk_id, score)
            for (chunk_id, _), score in zip(
                pairs, normalise_bm25([raw for _, raw in pairs], half=half), strict=True
            )
            if score >= threshold and score > 0
        ]
        if not scored:
            return []
        got = handle.collection.get(ids=[c for c, _ in scored], include=["documents", "metadatas"])
        found = {
            chunk_id: (document, dict(meta or {}))
            for chunk_id, document, meta in zip(got["ids"], got["documents"], got["metadatas"], strict=True)
        }
        hits = []
        for chunk_id, score in scored:
            document, meta = found.get(chunk_id, (None, {}))
            entry = live_entry(handle, meta)
            if entry is not None:
                hits.append(visible_hit(entry, chunk_id, document, meta, score))
        if len(hits) >= depth or len(pairs) < k or len(scored) < len(pairs):
            return hits[:depth]
        k *= 2


def _load_keywords_once(handle: DatasetHandle) -> None:
    if not handle.keywords_synced:
        handle.keywords.load()
        handle.keywords_synced = True


def keyword_ids_missing(handle: DatasetHandle) -> list[str]:
    """Live chunk ids whose tokens the keyword index lacks (after loading it; tokens of gone ids dropped).

    Empty when the saved index matches the catalog. Otherwise (a new machine in server mode, an index
    saved by another tokenizer version, a lost folder) the caller tokenises these chunks' texts, where
    it likes (ChromaStore: in worker processes), before ensure_keywords.
    """
    _load_keywords_once(handle)
    index = handle.keywords
    if index.signature != handle.catalog.signature():
        index.refresh()  # another process (an ingest, another instance) may have saved this state
    if index.signature == handle.catalog.signature():
        return []
    live = list(handle.catalog.all_live_ids())
    held = index.ids()
    index.remove(held - set(live))
    return [chunk_id for chunk_id in live if chunk_id not in held]


def fetch_index_texts_in_batches(
    handle: DatasetHandle, ids: Sequence[str], batch: int = 2000
) -> dict[str, str]:
    """fetch_index_texts over any number of ids, a bounded Chroma read at a time."""
    texts: dict[str, str] = {}
    for start in range(0, len(ids), batch):
        texts.update(fetch_index_texts(handle, ids[start : start + batch]))
    return texts


def ensure_keywords(handle: DatasetHandle, *, searchable: bool) -> bool:
    """Load the saved keyword index, take another process's saved state or align the tokens with the
    catalog, and make held changes searchable if searchable; True when the index was behind the catalog
    and caught up here (a repair worth saving for every process), not by this process's own writes."""
    _load_keywords_once(handle)
    index = handle.keywords
    signature = handle.catalog.signature()
    behind = index.signature != signature
    if behind:
        index.refresh()
    if index.signature != signature:
        live = list(handle.catalog.all_live_ids())
        index.sync(live, lambda ids: fetch_index_texts(handle, ids), signature)
    if searchable and index.dirty:
        index.rebuild()
    return behind and index.unsaved


def search_keywords(handle: DatasetHandle, query: str, *, depth: int, threshold: float) -> list[Hit]:
    """ensure_keywords, saving a repair for every process, then keyword_hits: one worker-thread call."""
    if ensure_keywords(handle, searchable=True):
        handle.keywords.save()
    return keyword_hits(handle, query, depth=depth, threshold=threshold)


def commit_documents(
    handle: DatasetHandle,
    entries: Sequence[CatalogEntry],
    stale_ids: Sequence[str],
    tokenised: Sequence[tuple[str, str]],
) -> None:
    """Make document versions live (one catalog write) and apply the same change to the keyword tokens."""
    ensure_keywords(handle, searchable=False)
    handle.catalog.put_many(entries)
    handle.keywords.apply(stale_ids, tokenised, handle.catalog.signature())


def forget_document(handle: DatasetHandle, entry: CatalogEntry) -> None:
    """Remove a document from the catalog (hiding it at once) and its chunks from the keyword tokens."""
    ensure_keywords(handle, searchable=False)
    handle.catalog.remove(entry.info.document_id)
    handle.keywords.apply(entry.live_ids, [], handle.catalog.signature())
