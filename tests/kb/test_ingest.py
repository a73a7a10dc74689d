"""Ingestion planning and orchestration over an in-memory DocumentIndex: idempotence, changes, pruning."""

from __future__ import annotations

import asyncio
import pickle
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from core.errors import InvalidInput
from core.knowledge.ingest import ingest
from core.knowledge.ingest_plan import (
    IngestEvent,
    IngestSummary,
    TitledDocument,
    classify,
    document_id,
    fingerprint,
    gone_documents,
)
from core.messages import phrase
from core.models import Chunk, DocumentInfo


@dataclass(frozen=True)
class FakeRead:
    name: str
    title: str
    markdown: str
    content_hash: str


class Unreadable(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class FakeReader:
    """Files by path: text, or a reason the file cannot be read; records the reading threads."""

    def __init__(self) -> None:
        self.files: dict[Path, str | Unreadable] = {}
        self.threads: set[str] = set()

    def __call__(self, path: Path) -> FakeRead:
        self.threads.add(threading.current_thread().name)
        content = self.files.get(path, Unreadable("file not found"))
        if isinstance(content, Unreadable):
            raise content
        return FakeRead(path.stem, f"Title {path.stem}", content, f"hash-{content}")


class MemoryIndex:
    """An in-memory DocumentIndex that records every write."""

    def __init__(self) -> None:
        self.docs: dict[str, dict[str, tuple[DocumentInfo, list[Chunk]]]] = {}
        self.writes: list[tuple[str, str]] = []
        self.fail_with: Exception | None = None

    async def list_documents(self, dataset: str) -> list[DocumentInfo]:
        return [info for info, _ in self.docs.get(dataset, {}).values()]

    async def replace_document(
        self, dataset: str, document: DocumentInfo, chunks: Sequence[Chunk], *, embedding_model: str
    ) -> None:
        if self.fail_with is not None:
            raise self.fail_with
        self.writes.append(("replace", document.document_id))
        self.docs.setdefault(dataset, {})[document.document_id] = (document, list(chunks))

    async def delete_document(self, dataset: str, document_id: str) -> int:
        self.writes.append(("delete", document_id))
        _, chunks = self.docs[dataset].pop(document_id)
        return len(chunks)

    async def set_enabled(self, dataset: str, document_id: str, enabled: bool) -> None:
        info, chunks = self.docs[dataset][document_id]
        self.docs[dataset][document_id] = (replace(info, enabled=enabled), chunks)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = tmp_path / "docs"
    root.mkdir()
    return root


async def run(
    index: MemoryIndex, reader: FakeReader, folder: Path, *, prune: bool = False, max_tokens: int = 400
) -> IngestSummary:
    paths = sorted(reader.files)
    return await ingest(
        index,
        "ds",
        paths,
        read=reader,
        embedding_model="m",
        roots=[folder],
        max_tokens=max_tokens,
        prune=prune,
        unreadable=(Unreadable,),
    )


def paragraphs(count: int, word: str) -> str:
    return "\n\n".join(f"{word} paragraph {i}. " + "words " * 300 for i in range(count))


async def test_first_run_adds_readable_files_and_skips_unreadable_ones(folder: Path) -> None:
    """New files are added with their chunks; an unreadable file is skipped with its reason."""
    reader, index = FakeReader(), MemoryIndex()
    reader.files = {
        folder / "a.md": paragraphs(3, "alpha"),
        folder / "b.md": "# B\n\nshort",
        folder / "bad.md": Unreadable("binary file"),
    }
    summary = await run(index, reader, folder)
    assert (summary.files, summary.added, summary.skipped, summary.unchanged) == (3, 2, 1, 0)
    assert summary.chunks_added == sum(len(chunks) for _, chunks in index.docs["ds"].values()) > 3
    assert summary.skipped_files == ((str(folder / "bad.md"), "binary file"),)
    stored = {info.name: info for info, _ in index.docs["ds"].values()}
    assert isinstance(stored["a"], TitledDocument) and stored["a"].title == "Title a"
    assert stored["a"].document_id == document_id("ds", str((folder / "a.md").resolve()))
    assert stored["a"].content_hash == fingerprint("hash-" + reader.files[folder / "a.md"], 400)  # type: ignore[operator]


async def test_second_run_over_unchanged_files_writes_nothing(folder: Path) -> None:
    """Re-ingesting unchanged files makes no write and reports their chunks as unchanged."""
    reader, index = FakeReader(), MemoryIndex()
    reader.files = {folder / "a.md": paragraphs(3, "alpha"), folder / "b.md": "short"}
    first = await run(index, reader, folder)
    index.writes.clear()
    second = await run(index, reader, folder)
    assert index.writes == []
    assert (second.added, second.changed, second.unchanged, second.chunks_added) == (0, 0, 2, 0)
    assert second.chunks_unchanged == first.chunks_added
    assert second.line().startswith(
        f"files 2 · chunks added 0 / unchanged {first.chunks_added} / removed 0 · "
    )


async def test_changed_file_is_replaced_and_its_old_chunks_counted_as_removed(folder: Path) -> None:
    """A file whose content changed is replaced once; its old chunk count is reported as removed."""
    reader, index = FakeReader(), MemoryIndex()
    reader.files = {folder / "a.md": paragraphs(3, "alpha"), folder / "b.md": "short"}
    await run(index, reader, folder)
    old_chunks = len(next(chunks for info, chunks in index.docs["ds"].values() if info.name == "a"))
    reader.files[folder / "a.md"] = paragraphs(1, "beta")
    index.writes.clear()
    summary = await run(index, reader, folder)
    assert [kind for kind, _ in index.writes] == ["replace"]
    assert (summary.changed, summary.unchanged, summary.chunks_removed) == (1, 1, old_chunks)
    assert summary.chunks_added == 1


async def test_a_new_chunk_size_rechunks_every_file(folder: Path) -> None:
    """The chunk size is part of the fingerprint, so changing it re-chunks unchanged files."""
    reader, index = FakeReader(), MemoryIndex()
    reader.files = {folder / "a.md": paragraphs(3, "alpha")}
    await run(index, reader, folder, max_tokens=400)
    summary = await run(index, reader, folder, max_tokens=1200)
    assert summary.changed == 1
    assert summary.chunks_added == 1


async def test_files_gone_from_the_folder_are_deleted_only_with_prune(folder: Path) -> None:
    """Without prune a vanished file is only counted as missing; with prune it is deleted with its chunks."""
    reader, index = FakeReader(), MemoryIndex()
    reader.files = {folder / "a.md": paragraphs(2, "alpha"), folder / "b.md": "short"}
    await run(index, reader, folder)
    del reader.files[folder / "a.md"]
    kept = await run(index, reader, folder)
    assert (kept.missing, kept.removed) == (1, 0)
    assert len(index.docs["ds"]) == 2
    pruned = await run(index, reader, folder, prune=True)
    assert (pruned.removed, pruned.chunks_removed, pruned.missing) == (1, 2, 0)
    assert [info.name for info, _ in index.docs["ds"].values()] == ["b"]


def test_documents_outside_the_ingested_folders_are_never_pruned() -> None:
    """Only documents whose source lies under an ingested folder (and was not seen) count as gone."""

    def info(source: str) -> DocumentInfo:
        return DocumentInfo("ds", source, source, source, "h", True, 1)

    docs = [info("/data/a/x.md"), info("/data/a/sub/y.md"), info("/data/b/z.md"), info("/data/ab/w.md")]
    gone = gone_documents(docs, ["/data/a"], seen_sources={"/data/a/x.md"})
    assert [d.source for d in gone] == ["/data/a/sub/y.md"]


def test_classification_and_ids_are_pure_and_stable() -> None:
    """Document ids depend on dataset and source only; classify compares fingerprints."""
    assert document_id("ds", "/a.md") == document_id("ds", "/a.md") != document_id("other", "/a.md")
    known = DocumentInfo("ds", "id", "a", "/a.md", fingerprint("h", 400), True, 2)
    assert classify(None, "x") == "added"
    assert classify(known, fingerprint("h", 400)) == "unchanged"
    assert classify(known, fingerprint("h", 200)) == "changed"


async def test_reading_runs_in_worker_threads_and_progress_is_reported(folder: Path) -> None:
    """Files are read off the event loop thread, and each file produces one (possibly async) event."""
    reader, index = FakeReader(), MemoryIndex()
    reader.files = {folder / f"{i}.md": f"text {i}" for i in range(6)}
    events: list[IngestEvent] = []

    async def on_event(event: IngestEvent) -> None:
        events.append(event)

    await ingest(
        index,
        "ds",
        sorted(reader.files),
        read=reader,
        embedding_model="m",
        on_event=on_event,
        unreadable=(Unreadable,),
    )
    assert threading.current_thread().name not in reader.threads
    assert [e.done for e in events] == [1, 2, 3, 4, 5, 6]
    assert {e.total for e in events} == {6}
    assert [e.outcome for e in events] == ["added"] * 6


async def test_a_write_error_stops_the_run(folder: Path) -> None:
    """An error from the index (e.g. the wrong embedding model) propagates instead of being skipped."""
    reader, index = FakeReader(), MemoryIndex()
    reader.files = {folder / f"{i}.md": f"text {i}" for i in range(8)}
    index.fail_with = InvalidInput(
        phrase("error.written_with_other_model", dataset="docs", built_with="model-a", model="model-b")
    )
    with pytest.raises(InvalidInput):
        await run(index, reader, folder)
    assert index.docs == {}


class BatchingIndex(MemoryIndex):
    """A MemoryIndex that also offers replace_documents, recording each batch's size."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[int] = []

    async def replace_documents(
        self, dataset: str, items: Sequence[tuple[DocumentInfo, Sequence[Chunk]]], *, embedding_model: str
    ) -> None:
        self.batches.append(len(items))
        for document, chunks in items:
            await self.replace_document(dataset, document, chunks, embedding_model=embedding_model)


async def test_changed_files_are_written_in_batches_when_the_index_supports_it(folder: Path) -> None:
    """An index with replace_documents gets changed files together, and every file still gets its event."""
    reader, index = FakeReader(), BatchingIndex()
    reader.files = {folder / f"{i:03d}.md": f"text {i}" for i in range(70)}
    events: list[IngestEvent] = []
    summary = await ingest(
        index,
        "ds",
        sorted(reader.files),
        read=reader,
        embedding_model="m",
        on_event=events.append,
        unreadable=(Unreadable,),
    )
    assert index.batches == [64, 6]
    assert summary.added == 70 and len(index.docs["ds"]) == 70
    assert [e.done for e in events] == list(range(1, 71))


def title_keywords(title: str, chunks: Sequence[Chunk]) -> list[str]:
    """A stand-in keyword function (top-level, so it can be pickled like the real one)."""
    return [f"{title}|{chunk.position}" for chunk in chunks]


class WorkerIndex(BatchingIndex):
    """A BatchingIndex lending a 'worker': calls are pickled (as a process would need) and run in a thread."""

    chunk_keywords = staticmethod(title_keywords)

    def __init__(self) -> None:
        super().__init__()
        self.worker_calls = 0
        self.keywords: list[Sequence[Sequence[str]] | None] = []

    async def run_in_worker(self, function: Callable[..., Any], /, *args: Any) -> Any:
        self.worker_calls += 1
        shipped_function, shipped_args = pickle.loads(pickle.dumps((function, args)))
        return await asyncio.to_thread(shipped_function, *shipped_args)

    async def replace_documents(
        self,
        dataset: str,
        items: Sequence[tuple[DocumentInfo, Sequence[Chunk]]],
        *,
        embedding_model: str,
        keywords: Sequence[Sequence[str]] | None = None,
    ) -> None:
        self.keywords.append(keywords)
        await super().replace_documents(dataset, items, embedding_model=embedding_model)


def on_disk(reader: FakeReader, folder: Path, count: int) -> list[Path]:
    """count files written to disk (ingestion sizes them) and known to the reader."""
    paths = []
    for i in range(count):
        path = folder / f"{i:02d}.md"
        text = f"# 文档{i}\n\n" + paragraphs(2, f"w{i}")
        path.write_text(text, encoding="utf-8")
        reader.files[path] = text
        paths.append(path)
    return paths


async def test_large_runs_are_prepared_by_the_index_worker_with_keyword_terms(folder: Path) -> None:
    """Above worker_min_bytes, files are read and chunked via run_in_worker and their terms reach the index."""
    reader, index = FakeReader(), WorkerIndex()
    paths = on_disk(reader, folder, 5)
    summary = await ingest(
        index, "ds", paths, read=reader, embedding_model="m", unreadable=(Unreadable,), worker_min_bytes=1
    )
    assert index.worker_calls >= 1
    assert summary.added == 5
    stored = {info.document_id: (info, chunks) for info, chunks in index.docs["ds"].values()}
    [terms] = index.keywords
    assert terms is not None and len(terms) == 5
    flat = [term for item in terms for term in item]
    expected = [
        term
        for info, chunks in stored.values()
        for term in title_keywords(getattr(info, "title", ""), chunks)
    ]
    assert sorted(flat) == sorted(expected)


async def test_small_runs_unchanged_files_and_unpicklable_readers_stay_in_threads(folder: Path) -> None:
    """The worker is not borrowed below worker_min_bytes, for a reader a process cannot receive, or
    when every file is already stored with this chunk size (a re-ingest only reads and hashes)."""
    reader, index = FakeReader(), WorkerIndex()
    paths = on_disk(reader, folder, 3)
    common: dict[str, Any] = {"embedding_model": "m", "unreadable": (Unreadable,)}
    await ingest(index, "ds", paths, read=reader, worker_min_bytes=10**9, **common)
    assert index.worker_calls == 0 and index.keywords == [None]
    await ingest(index, "other", paths, read=lambda path: reader(path), worker_min_bytes=1, **common)
    assert index.worker_calls == 0
    again = await ingest(index, "ds", paths, read=reader, worker_min_bytes=1, **common)
    assert index.worker_calls == 0 and again.unchanged == 3
    rechunked = await ingest(index, "ds", paths, read=reader, worker_min_bytes=1, max_tokens=200, **common)
    assert index.worker_calls >= 1 and rechunked.changed == 3
