"""What a dataset holds and whether its parts agree: the rows of `kb datasets list`, `kb datasets check`.

A dataset is three parts that must agree (adapters.knowledge.chroma.dataset): the catalog (which
document versions are live, how many chunks each has), the chunk collection (the records, and the
HNSW vector index over them) and the keyword index beside Chroma (adapters.knowledge.keywords).
check_dataset compares them by ids: live chunks missing from the collection, records no live version
vouches for, live chunks the vector index cannot return (what a concurrent writer loses), and a
keyword index holding other ids. The vector index is read with one unfiltered query as deep as the
collection (a filtered query fails outright on a missing id). quick_check (`kb doctor`) compares counts
and signatures only, so it costs the same at a million chunks as at a thousand. Every function blocks: the
store runs it through its access, in a worker thread.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from adapters.knowledge.chroma.damage import chroma_reason
from adapters.knowledge.chroma.dataset import DatasetHandle

PAGE = 5000  # ids read per get() when listing a collection
NAMES_SHOWN = 3


def _chunks(count: int) -> str:
    return f"{count} chunk{'' if count == 1 else 's'}"


@dataclass(frozen=True, slots=True)
class DatasetSummary:
    """One line of `kb datasets list`: size, embedding model, last change; problem when it cannot be read."""

    name: str
    documents: int
    chunks: int
    model: str
    updated: float  # epoch seconds of the newest document change (0: none)
    problem: str = ""


@dataclass(frozen=True, slots=True)
class DatasetCheck:
    """What `kb datasets check` found: the counts of each part, the problems (empty: they agree) and notes."""

    name: str
    documents: int = 0
    live_chunks: int = 0  # chunks the catalog's live versions have
    stored_chunks: int = 0  # records in the chunk collection
    indexed_chunks: int = 0  # live chunks the vector index returns
    keyword_chunks: int | None = None  # live chunks the saved keyword index holds (None: none saved)
    problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems


def summarize(handle: DatasetHandle) -> DatasetSummary:
    """The dataset as its catalog (reloaded) describes it."""
    handle.catalog.refresh()
    entries = handle.catalog.entries()
    return DatasetSummary(
        name=handle.name,
        documents=len(entries),
        chunks=sum(entry.info.chunk_count for entry in entries),
        model=handle.model,
        updated=max((entry.info.updated_at for entry in entries), default=0.0),
    )


def stored_ids(handle: DatasetHandle) -> set[str]:
    """Every record id in the chunk collection."""
    ids: set[str] = set()
    offset = 0
    while True:
        got = handle.collection.get(include=[], limit=PAGE, offset=offset)
        ids.update(got["ids"])
        if len(got["ids"]) < PAGE:
            return ids
        offset += PAGE


def indexed_ids(handle: DatasetHandle, depth: int) -> set[str]:
    """The ids the vector index returns when asked for `depth` neighbours of one vector (all it has)."""
    if depth <= 0 or handle.dimension <= 0:
        return set()
    probe = np.ones((1, handle.dimension), dtype=np.float32)
    got = handle.collection.query(query_embeddings=probe, n_results=depth, include=[])
    return set(got["ids"][0])


def _documents_named(handle: DatasetHandle, chunk_ids: Iterable[str]) -> str:
    """ "a.md, b.md and 3 more": the documents these chunk ids belong to."""
    names = sorted(
        {
            (entry.info.name if entry is not None else document_id)
            for document_id in {chunk_id.split(":", 1)[0] for chunk_id in chunk_ids}
            for entry in [handle.catalog.get(document_id)]
        }
    )
    shown = ", ".join(names[:NAMES_SHOWN])
    return shown if len(names) <= NAMES_SHOWN else f"{shown} and {len(names) - NAMES_SHOWN} more"


def check_dataset(handle: DatasetHandle, keyword_dir: Path | None) -> DatasetCheck:
    """Compare the catalog, the collection, its vector index and the saved keyword index (module docstring)."""
    problems: list[str] = []
    notes: list[str] = []
    try:
        handle.catalog.refresh()
    except Exception as exc:
        return DatasetCheck(handle.name, problems=(f"the catalog cannot be read ({chroma_reason(exc)})",))
    entries = handle.catalog.entries()
    live = set(handle.catalog.all_live_ids())
    try:
        stored = stored_ids(handle)
    except Exception as exc:
        problem = f"the chunk collection cannot be read ({chroma_reason(exc)})"
        return DatasetCheck(handle.name, len(entries), len(live), problems=(problem,))
    missing = live - stored
    if missing:
        problems.append(
            f"{len(missing)} of {_chunks(len(live))} the catalog lists are missing from the collection "
            f"({_documents_named(handle, missing)})"
        )
    orphans = stored - live
    if orphans:
        problems.append(
            f"the collection holds {_chunks(len(orphans))} of no live document version "
            "(left by an interrupted write)"
        )
    try:
        indexed = indexed_ids(handle, len(stored)) & live
    except Exception as exc:
        problems.append(f"the vector index cannot be read ({chroma_reason(exc)})")
        indexed = set()
    else:
        unindexed = (live & stored) - indexed
        if unindexed:
            problems.append(
                f"the vector index lacks {len(unindexed)} of {_chunks(len(live))}, so searches cannot find "
                f"them ({_documents_named(handle, unindexed)})"
            )
    keyword_chunks = _check_keywords(handle, keyword_dir, live, problems, notes)
    return DatasetCheck(
        name=handle.name,
        documents=len(entries),
        live_chunks=len(live),
        stored_chunks=len(stored),
        indexed_chunks=len(indexed),
        keyword_chunks=keyword_chunks,
        problems=tuple(problems),
        notes=tuple(notes),
    )


def quick_check(handle: DatasetHandle, keyword_dir: Path | None) -> DatasetCheck:
    """Counts and signatures only (`kb doctor`): fewer records than live chunks, a saved keyword index of
    another tokenizer or another state of the catalog. Ids and the vector index are left to check_dataset."""
    try:
        handle.catalog.refresh()
    except Exception as exc:
        return DatasetCheck(handle.name, problems=(f"the catalog cannot be read ({chroma_reason(exc)})",))
    entries = handle.catalog.entries()
    live = sum(len(entry.live_ids) for entry in entries)
    try:
        stored = int(handle.collection.count())
    except Exception as exc:
        problem = f"the chunk collection cannot be read ({chroma_reason(exc)})"
        return DatasetCheck(handle.name, len(entries), live, problems=(problem,))
    problems: list[str] = []
    notes: list[str] = []
    if stored < live:
        problems.append(f"the collection holds {_chunks(stored)}, the catalog lists {_chunks(live)}")
    elif stored > live:
        notes.append(
            f"{_chunks(stored - live)} of no live version (an ingest running, or an interrupted one)"
        )
    keyword_chunks: int | None = None
    if keyword_dir is not None and handle.keywords.has_saved():
        saved = handle.keywords.saved_signature()
        if saved is None:
            problems.append(
                f"the keyword index in {handle.keywords.where} cannot be read or was built by another tokenizer"
            )
        elif saved != handle.catalog.signature():
            problems.append("the keyword index was saved for another state of the catalog")
        else:
            keyword_chunks = live
    return DatasetCheck(
        handle.name,
        documents=len(entries),
        live_chunks=live,
        stored_chunks=stored,
        keyword_chunks=keyword_chunks,
        problems=tuple(problems),
        notes=tuple(notes),
    )


def _check_keywords(
    handle: DatasetHandle, keyword_dir: Path | None, live: set[str], problems: list[str], notes: list[str]
) -> int | None:
    """The saved keyword index against the live ids (a fresh read of its shelf, not the in-memory one)."""
    if keyword_dir is None:
        return None
    if not handle.keywords.has_saved():
        notes.append("no keyword index is saved on this machine yet: the first keyword search builds it")
        return None
    saved = handle.keywords.reread()
    if saved is None:
        problems.append(
            f"the keyword index in {handle.keywords.where} cannot be read or was built by another tokenizer"
        )
        return None
    held = saved.ids()
    lacking, extra = live - held, held - live
    if lacking:
        problems.append(f"the keyword index lacks {len(lacking)} of {_chunks(len(live))}")
    if extra:
        problems.append(f"the keyword index holds {_chunks(len(extra))} that are not live")
    if not lacking and not extra and saved.signature != handle.catalog.signature():
        problems.append("the keyword index was saved for another state of the catalog")
    return len(held & live)
