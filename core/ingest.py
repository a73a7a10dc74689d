"""Idempotent ingestion: plan each file (added / changed / unchanged / removed) and apply it to the index.

A document's id is stable (a hash of dataset and resolved source path); its fingerprint is the file's
content hash plus the chunk size, so re-ingesting an unchanged file writes nothing and a new
``--chunk-tokens`` re-chunks. Reading and chunking run in worker threads, a few files ahead of the
writes; changed files are written (embedded + stored) in batches of about BATCH_CHUNKS chunks.
Unreadable files are skipped and reported, never fatal.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from core.chunking import DEFAULT_MAX_TOKENS, chunk_markdown
from core.ingest_plan import (
    BatchDocumentIndex,
    IngestEvent,
    IngestSummary,
    Outcome,
    SourceDocument,
    TitledDocument,
    classify,
    document_id,
    fingerprint,
    gone_documents,
)
from core.models import Chunk, DocumentInfo
from core.ports import DocumentIndex

__all__ = [
    "BATCH_CHUNKS",
    "BATCH_DOCUMENTS",
    "BatchDocumentIndex",
    "IngestEvent",
    "IngestSummary",
    "SourceDocument",
    "TitledDocument",
    "classify",
    "document_id",
    "fingerprint",
    "gone_documents",
    "ingest",
]

PREFETCH = 4
BATCH_CHUNKS = 512  # changed files are written together until about this many chunks ...
BATCH_DOCUMENTS = 64  # ... or this many files


@dataclass(frozen=True, slots=True)
class _Prepared:
    path: Path
    source: str
    read: SourceDocument | None
    reason: str
    outcome: Outcome
    chunks: tuple[Chunk, ...] = ()


@dataclass
class _Tally:
    added: int = 0
    changed: int = 0
    unchanged: int = 0
    chunks_added: int = 0
    chunks_unchanged: int = 0
    chunks_removed: int = 0


def _resolved(path: Path) -> str:
    return str(path.resolve())


async def _ahead(
    prepare: Callable[[Path], Awaitable[_Prepared]], paths: Sequence[Path], window: int = PREFETCH
) -> AsyncIterator[_Prepared]:
    """prepare(path) for each path in order, up to `window` files ahead of the consumer."""
    pending: deque[asyncio.Task[_Prepared]] = deque()
    try:
        for path in paths:
            pending.append(asyncio.ensure_future(prepare(path)))
            if len(pending) > window:
                yield await pending.popleft()
        while pending:
            yield await pending.popleft()
    finally:
        for task in pending:
            task.cancel()


class _Writer:
    """Collects changed files into batches, writes them, keeps the tally and emits one event per file."""

    def __init__(
        self,
        index: DocumentIndex,
        dataset: str,
        existing: dict[str, DocumentInfo],
        *,
        embedding_model: str,
        max_tokens: int,
        total: int,
        on_event: Callable[[IngestEvent], object] | None,
    ) -> None:
        self.index = index
        self.dataset = dataset
        self.existing = existing
        self.embedding_model = embedding_model
        self.max_tokens = max_tokens
        self.total = total
        self.on_event = on_event
        self.tally = _Tally()
        self.done = 0
        self.pending: list[_Prepared] = []

    async def _emit(self, item: _Prepared, chunks: int) -> None:
        self.done += 1
        if self.on_event is not None:
            event = IngestEvent(self.done, self.total, str(item.path), item.outcome, chunks, item.reason)
            result = self.on_event(event)
            if inspect.isawaitable(result):
                await result

    async def take(self, item: _Prepared) -> None:
        """Count an unchanged or skipped file at once; queue a changed one (flushing full batches)."""
        if item.read is None:
            await self._emit(item, 0)
        elif item.outcome == "unchanged":
            current = self.existing.get(document_id(self.dataset, item.source))
            count = current.chunk_count if current is not None else 0
            self.tally.unchanged += 1
            self.tally.chunks_unchanged += count
            await self._emit(item, count)
        else:
            self.pending.append(item)
            if (
                len(self.pending) >= BATCH_DOCUMENTS
                or sum(len(p.chunks) for p in self.pending) >= BATCH_CHUNKS
            ):
                await self.flush()

    async def flush(self) -> None:
        """Write the queued files: one replace_documents call when the index offers it."""
        batch, self.pending = self.pending, []
        if not batch:
            return
        items = [(self._info(item), item.chunks) for item in batch]
        replace_many = getattr(self.index, "replace_documents", None)
        if replace_many is not None:
            await replace_many(self.dataset, items, embedding_model=self.embedding_model)
        else:
            for info, chunks in items:
                await self.index.replace_document(
                    self.dataset, info, chunks, embedding_model=self.embedding_model
                )
        for item in batch:
            current = self.existing.get(document_id(self.dataset, item.source))
            self.tally.chunks_added += len(item.chunks)
            if item.outcome == "changed" and current is not None:
                self.tally.changed += 1
                self.tally.chunks_removed += current.chunk_count
            else:
                self.tally.added += 1
            await self._emit(item, len(item.chunks))

    def _info(self, item: _Prepared) -> TitledDocument:
        assert item.read is not None
        return TitledDocument(
            dataset=self.dataset,
            document_id=document_id(self.dataset, item.source),
            name=item.read.name,
            source=item.source,
            content_hash=fingerprint(item.read.content_hash, self.max_tokens),
            enabled=True,
            chunk_count=len(item.chunks),
            title=item.read.title,
        )


async def ingest(
    index: DocumentIndex,
    dataset: str,
    paths: Sequence[Path],
    *,
    read: Callable[[Path], SourceDocument],
    embedding_model: str,
    roots: Sequence[Path] = (),
    max_tokens: int = DEFAULT_MAX_TOKENS,
    prune: bool = False,
    unreadable: tuple[type[BaseException], ...] = (OSError, ValueError),
    on_event: Callable[[IngestEvent], object] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> IngestSummary:
    """Bring dataset in line with the files at paths (found under roots); see the module docstring.

    read(path) raises one of `unreadable` for a file that cannot be read: it is skipped with its reason.
    With prune, documents under roots whose file is gone are deleted with their chunks; without it they
    are only counted (summary.missing). on_event gets one IngestEvent per file (may be async). Changed
    files are written in batches (index.replace_documents when the index has it, see BatchDocumentIndex).
    """
    started = clock()
    existing = {doc.document_id: doc for doc in await index.list_documents(dataset)}

    async def prepare(path: Path) -> _Prepared:
        source = await asyncio.to_thread(_resolved, path)
        try:
            document = await asyncio.to_thread(read, path)
        except unreadable as exc:
            return _Prepared(path, source, None, str(getattr(exc, "reason", exc)), "skipped")
        current = existing.get(document_id(dataset, source))
        outcome = classify(current, fingerprint(document.content_hash, max_tokens))
        if outcome == "unchanged":
            return _Prepared(path, source, document, "", outcome)
        chunks = await asyncio.to_thread(chunk_markdown, document.markdown, max_tokens=max_tokens)
        return _Prepared(path, source, document, "", outcome, tuple(chunks))

    writer = _Writer(
        index,
        dataset,
        existing,
        embedding_model=embedding_model,
        max_tokens=max_tokens,
        total=len(paths),
        on_event=on_event,
    )
    seen: set[str] = set()
    skipped: list[tuple[str, str]] = []
    async for item in _ahead(prepare, paths):
        seen.add(item.source)
        if item.read is None:
            skipped.append((str(item.path), item.reason))
        await writer.take(item)
    await writer.flush()
    resolved_roots = [await asyncio.to_thread(_resolved, root) for root in roots]
    gone = gone_documents(list(existing.values()), resolved_roots, seen)
    tally = writer.tally
    removed = 0
    if prune:
        for doc in gone:
            tally.chunks_removed += await index.delete_document(dataset, doc.document_id)
            removed += 1
    return IngestSummary(
        files=len(paths),
        added=tally.added,
        unchanged=tally.unchanged,
        removed=removed,
        skipped=len(skipped),
        chunks_added=tally.chunks_added,
        chunks_removed=tally.chunks_removed,
        seconds=clock() - started,
        changed=tally.changed,
        chunks_unchanged=tally.chunks_unchanged,
        missing=0 if prune else len(gone),
        skipped_files=tuple(skipped),
    )
