"""Idempotent ingestion: plan each file (added / changed / unchanged / removed) and apply it to the index.

A document's id is stable (a hash of dataset and resolved source path); its fingerprint is the file's
content hash plus the chunk size, so re-ingesting an unchanged file writes nothing and a new
``--chunk-tokens`` re-chunks. Unreadable files are skipped and reported, never fatal.

Pipeline: files are prepared (read, classified, chunked) in groups of about GROUP_BYTES, ahead of the
writes; changed files are written (embedded + stored) in batches of about BATCH_CHUNKS chunks. When the
index lends worker processes (core.knowledge.ingest_plan.WorkerDocumentIndex) and the new or re-chunked files are
big enough to pay for starting them, up to PREFETCH_GROUPS groups are prepared there at once, keyword
terms included: embedded Chroma holds the GIL for a whole write, so only other processes run beside it.
On 2 cores the writer (with Chroma's HNSW threads) and the workers then keep both cores ~95 % busy, and
total CPU is the bound (tests/benchmarks/bench_kb.py). Otherwise a couple of groups ahead in threads.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import pickle
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from core.knowledge.chunking import DEFAULT_MAX_TOKENS
from core.knowledge.ingest_plan import (
    FileJob,
    IngestEvent,
    IngestProgress,
    IngestSummary,
    PreparedFile,
    SourceDocument,
    TitledDocument,
    WorkerDocumentIndex,
    document_id,
    fingerprint,
    gone_documents,
    groups,
    likely_changed,
    prepare_files,
)
from core.models import DocumentInfo
from core.ports import DocumentIndex

# Changed files are written together until about BATCH_CHUNKS chunks or BATCH_DOCUMENTS files: one
# catalog flip per batch (~20 ms in Chroma), so 1024 rather than 512 (measured: 10k chunks ~1075/s
# vs ~1030/s). The index still bounds each Chroma call (adapters.knowledge.chroma.dataset.WRITE_BATCH).
BATCH_CHUNKS = 1024
BATCH_DOCUMENTS = 64
# Groups prepared ahead: deep enough that a worker always has a group to prepare while the writer
# works through the oldest (at 100k chunks, 3 groups: 957-969 chunks/s, 6-10: 965-1060).
PREFETCH_GROUPS = 8
THREAD_PREFETCH_GROUPS = 2  # threads share the GIL with the writes: reading further ahead gains nothing
WORKER_MIN_BYTES = 1024 * 1024  # smaller runs: starting the worker (~1 s) costs more than it saves


def _jobs(
    paths: Sequence[Path],
    dataset: str,
    existing: dict[str, DocumentInfo],
    sources: Mapping[Path, str] | None = None,
) -> list[FileJob]:
    """A FileJob per path: its source (the given one, else the resolved path), size (0 when it cannot be
    read), stored document."""
    jobs = []
    for path in paths:
        try:
            size = path.stat().st_size
        except OSError:
            size = 0
        source = sources[path] if sources is not None and path in sources else str(path.resolve())
        jobs.append(FileJob(path, source, size, existing.get(document_id(dataset, source))))
    return jobs


def _worker_of(
    index: DocumentIndex, shipped: object, total_bytes: int, min_bytes: int
) -> WorkerDocumentIndex | None:
    """The index as a WorkerDocumentIndex when it lends a worker, the run is big enough and the
    reader can be sent to a process (a lambda or closure cannot); else None (threads)."""
    if total_bytes < min_bytes or not callable(getattr(index, "run_in_worker", None)):
        return None
    try:
        pickle.dumps(shipped)
    except Exception:  # any pickling failure means: prepare in threads
        return None
    return cast(WorkerDocumentIndex, index)


async def _ahead(
    prepare: Callable[[list[FileJob]], Awaitable[list[PreparedFile]]],
    groups: Sequence[list[FileJob]],
    window: int = PREFETCH_GROUPS,
) -> AsyncIterator[list[PreparedFile]]:
    """prepare(group) for each group in order, up to `window` groups ahead of the consumer."""
    pending: deque[asyncio.Task[list[PreparedFile]]] = deque()
    try:
        for group in groups:
            pending.append(asyncio.ensure_future(prepare(group)))
            if len(pending) > window:
                yield await pending.popleft()
        while pending:
            yield await pending.popleft()
    finally:
        for task in pending:
            task.cancel()


@dataclass
class _Tally:
    added: int = 0
    changed: int = 0
    unchanged: int = 0
    removed: int = 0
    chunks_added: int = 0
    chunks_unchanged: int = 0
    chunks_removed: int = 0


class _Writer:
    """Collects changed files into batches, writes them, keeps the tally and reports every file.

    Progress: a file's bytes count as done once it is handled; inside a batch being written, the
    batch's bytes advance with the chunks the index reports stored (on_written).
    """

    def __init__(
        self,
        index: DocumentIndex,
        dataset: str,
        existing: dict[str, DocumentInfo],
        *,
        embedding_model: str,
        max_tokens: int,
        total: int,
        total_bytes: int,
        on_event: Callable[[IngestEvent], object] | None,
        on_progress: Callable[[IngestProgress], object] | None = None,
        with_keywords: bool = False,
        named_by_title: bool = False,
    ) -> None:
        self.index = index
        self.with_keywords = with_keywords
        self.named_by_title = named_by_title
        self.dataset = dataset
        self.existing = existing
        self.embedding_model = embedding_model
        self.max_tokens = max_tokens
        self.total = total
        self.total_bytes = total_bytes
        self.on_event = on_event
        self.on_progress = on_progress
        self.tally = _Tally()
        self.done = 0
        self.bytes_done = 0
        self.chunks_done = 0
        self.batch_written = 0
        self.pending: list[PreparedFile] = []
        self.pending_chunks = 0

    def _report(self, partial_bytes: int = 0) -> None:
        if self.on_progress is not None:
            self.on_progress(
                IngestProgress(
                    self.done, self.total, self.bytes_done + partial_bytes, self.total_bytes, self.chunks_done
                )
            )

    async def _emit(self, item: PreparedFile, chunks: int) -> None:
        self.done += 1
        self.bytes_done += item.size
        if self.on_event is not None:
            event = IngestEvent(self.done, self.total, str(item.path), item.outcome, chunks, item.reason)
            result = self.on_event(event)
            if inspect.isawaitable(result):
                await result
        self._report()

    async def take(self, item: PreparedFile) -> None:
        """Count an unchanged or skipped file at once; queue a changed one (flushing full batches).

        A blank file's earlier document (stored before blank files were skipped) is deleted.
        """
        if item.read is None:
            current = self.existing.get(document_id(self.dataset, item.source))
            if item.blank and current is not None:
                self.tally.chunks_removed += await self.index.delete_document(
                    self.dataset, current.document_id
                )
                self.tally.removed += 1
            await self._emit(item, 0)
        elif item.outcome == "unchanged":
            current = self.existing.get(document_id(self.dataset, item.source))
            count = current.chunk_count if current is not None else 0
            self.tally.unchanged += 1
            self.tally.chunks_unchanged += count
            self.chunks_done += count
            await self._emit(item, count)
        else:
            self.pending.append(item)
            self.pending_chunks += len(item.chunks)
            if len(self.pending) >= BATCH_DOCUMENTS or self.pending_chunks >= BATCH_CHUNKS:
                await self.flush()

    async def _write(self, batch: list[PreparedFile]) -> Sequence[int] | None:
        items = [(self._info(item), item.chunks) for item in batch]
        replace_many = getattr(self.index, "replace_documents", None)
        if replace_many is None:
            for info, chunks in items:
                await self.index.replace_document(
                    self.dataset, info, chunks, embedding_model=self.embedding_model
                )
            return None
        options: dict[str, object] = {"embedding_model": self.embedding_model}
        if self.with_keywords:
            options["keywords"] = [item.keywords or () for item in batch]
        if "on_written" in inspect.signature(replace_many).parameters:
            batch_bytes = sum(item.size for item in batch)
            batch_chunks = max(1, sum(len(item.chunks) for item in batch))

            def on_written(count: int) -> None:
                self.batch_written += count
                self.chunks_done += count
                share = min(self.batch_written, batch_chunks) / batch_chunks
                self._report(partial_bytes=int(batch_bytes * share))

            options["on_written"] = on_written
        return cast("Sequence[int] | None", await replace_many(self.dataset, items, **options))

    async def flush(self) -> None:
        """Write the queued files: one replace_documents call when the index offers it."""
        batch, self.pending, self.pending_chunks = self.pending, [], 0
        if not batch:
            return
        self.batch_written = 0
        reused = await self._write(batch)
        if reused is None or len(reused) != len(batch):
            reused = [0] * len(batch)
        self.chunks_done += sum(len(item.chunks) for item in batch) - self.batch_written
        for item, kept in zip(batch, reused, strict=True):
            current = self.existing.get(document_id(self.dataset, item.source))
            self.tally.chunks_added += len(item.chunks) - kept
            self.tally.chunks_unchanged += kept
            if item.outcome == "changed" and current is not None:
                self.tally.changed += 1
                self.tally.chunks_removed += max(0, current.chunk_count - kept)
            else:
                self.tally.added += 1
            await self._emit(item, len(item.chunks))

    def _info(self, item: PreparedFile) -> TitledDocument:
        assert item.read is not None
        return TitledDocument(
            dataset=self.dataset,
            document_id=document_id(self.dataset, item.source),
            name=item.read.title if self.named_by_title and item.read.title else item.read.name,
            source=item.source,
            content_hash=fingerprint(item.read.content_hash, self.max_tokens),
            enabled=True,
            chunk_count=len(item.chunks),
            title=item.read.title,
            link=item.read.link,
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
    on_progress: Callable[[IngestProgress], object] | None = None,
    clock: Callable[[], float] = time.perf_counter,
    worker_min_bytes: int = WORKER_MIN_BYTES,
    content_hash: Callable[[Path], str] | None = None,
    sources: Mapping[Path, str] | None = None,
) -> IngestSummary:
    """Bring dataset in line with the files at paths (found under roots); see the module docstring.

    read(path) raises one of `unreadable` for a file that cannot be read: it is skipped with its reason.
    content_hash(path), when given, is the hash read() records, taken from the bytes alone: an unchanged
    file is then recognised without being parsed (a PDF's parse is seconds, its hash milliseconds).
    With prune, documents under roots whose file is gone are deleted with their chunks; without it they
    are only counted (summary.missing). on_event gets one IngestEvent per file (may be async);
    on_progress an IngestProgress after each file and, inside a batch, after each write. Files without
    text are skipped (see core.knowledge.ingest_plan.prepare_files). Changed files are written in batches (index.replace_documents when the index has it, see BatchDocumentIndex).
    Files are prepared in the index's worker process when it has one (WorkerDocumentIndex) and the new
    files (or those last chunked with another size) add up to worker_min_bytes or more. sources names the
    document of a path by something other than the path (a synced source's stable id, core.sources): its
    document id is derived from that name, and its title names it (its file is only this machine's copy).
    """
    started = clock()
    existing = {doc.document_id: doc for doc in await index.list_documents(dataset)}
    jobs = await asyncio.to_thread(_jobs, paths, dataset, existing, sources)
    changing_bytes = sum(job.size for job in jobs if likely_changed(job.current, max_tokens))
    worker = _worker_of(index, (read, unreadable, content_hash), changing_bytes, worker_min_bytes)
    prepare = functools.partial(
        prepare_files,
        read=read,
        max_tokens=max_tokens,
        unreadable=unreadable,
        chunk_keywords=worker.chunk_keywords if worker is not None else None,
        content_hash=content_hash,
    )

    async def prepare_group(group: list[FileJob]) -> list[PreparedFile]:
        if worker is not None:
            return await worker.run_in_worker(prepare, group)
        return await asyncio.to_thread(prepare, group)

    writer = _Writer(
        index,
        dataset,
        existing,
        embedding_model=embedding_model,
        max_tokens=max_tokens,
        total=len(paths),
        total_bytes=sum(job.size for job in jobs),
        on_event=on_event,
        on_progress=on_progress,
        with_keywords=worker is not None,
        named_by_title=sources is not None,
    )
    seen: set[str] = set()
    skipped: list[tuple[str, str]] = []
    window = PREFETCH_GROUPS if worker is not None else THREAD_PREFETCH_GROUPS
    async for prepared in _ahead(prepare_group, list(groups(jobs)), window):
        for item in prepared:
            seen.add(item.source)
            if item.read is None:
                skipped.append((str(item.path), item.reason))
            await writer.take(item)
    await writer.flush()
    resolved_roots = await asyncio.to_thread(lambda: [str(root.resolve()) for root in roots])
    gone = gone_documents(list(existing.values()), resolved_roots, seen)
    tally = writer.tally
    removed = tally.removed
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
