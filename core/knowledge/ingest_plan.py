"""Ingestion planning: stable document ids, fingerprints, added/changed/unchanged, what to prune.

Also the types ingestion exchanges (what a reader returns, per-file events, the run's summary) and the
per-file preparation (read, classify, chunk), a top-level function so a worker process can run it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any, Literal, Protocol, TypeVar

from core.knowledge.chunking import CHUNKER_VERSION, body_text, chunk_parts
from core.models import Chunk, DocumentInfo, DocumentPart
from core.ports import DocumentIndex

Outcome = Literal["added", "changed", "unchanged", "skipped"]
T = TypeVar("T")
# A group of files is one hand-off to a worker (384 KiB of Chinese text: ~400 chunks, ~0.3 s of its
# work): few enough hand-offs (each needs the writing process, busy in Chroma writes that hold its GIL),
# small enough that the first write starts soon and the last ones do not wait long for a straggler.
GROUP_BYTES = 384 * 1024
GROUP_FILES = 64

# Keyword-index terms of a document's chunks, given the document title (or name) and the chunks.
ChunkKeywords = Callable[[str, Sequence[Chunk]], list[str]]


class BatchDocumentIndex(DocumentIndex, Protocol):
    """A DocumentIndex that can replace several documents in one call (far cheaper per chunk)."""

    async def replace_documents(
        self, dataset: str, items: Sequence[tuple[DocumentInfo, Sequence[Chunk]]], *, embedding_model: str
    ) -> Sequence[int] | None:
        """replace_document for each (document, chunks), with every new version going live together.

        May return, per item, how many of its chunks kept their stored embedding (unchanged chunks of a
        changed document); None counts every chunk as new.
        """
        ...


class WorkerDocumentIndex(BatchDocumentIndex, Protocol):
    """A BatchDocumentIndex with worker processes that ingestion borrows for its per-file CPU work.

    Workers run beside the index's writes (embedded Chroma holds the GIL while it writes, so a thread
    could not): files are read, chunked and keyword-tokenised there, ahead of the writes, and the
    terms reach replace_documents(keywords=...) so the index need not tokenise them again.
    """

    @property
    def chunk_keywords(self) -> ChunkKeywords:
        """The index's keyword terms function: top-level, so it can be sent to a worker process."""
        ...

    async def run_in_worker(self, function: Callable[..., T], /, *args: Any) -> T:
        """function(*args) in a worker process (both picklable); in a thread if the process fails."""
        ...

    async def replace_documents(
        self,
        dataset: str,
        items: Sequence[tuple[DocumentInfo, Sequence[Chunk]]],
        *,
        embedding_model: str,
        keywords: Sequence[Sequence[str]] | None = None,
        on_written: Callable[[int], object] | None = None,
    ) -> Sequence[int] | None:
        """As BatchDocumentIndex; keywords[i][j] (from chunk_keywords) are item i's chunk j's terms;
        on_written(n) after each n chunks are stored (progress inside a big document)."""
        ...


class SourceDocument(Protocol):
    """What a reader returns for one file (adapters.knowledge.document_readers.ReadDocument fits).

    A reader may also give ``parts`` (core.models.DocumentPart: pages, slides, rows, chunked with their
    locations instead of ``markdown``) and ``warnings`` (what it left out, reported with the file).
    """

    @property
    def name(self) -> str: ...

    @property
    def title(self) -> str: ...

    @property
    def markdown(self) -> str: ...

    @property
    def content_hash(self) -> str: ...


@dataclass(frozen=True, slots=True)
class TitledDocument(DocumentInfo):
    """A DocumentInfo carrying the document title used in embedding texts (until DocumentInfo has one)."""

    title: str = ""


@dataclass(frozen=True, slots=True)
class IngestEvent:
    """One file handled: how far the run is and what happened to the file (reason: why it was skipped,
    or what of it was left out when it was read)."""

    done: int
    total: int
    path: str
    outcome: Outcome
    chunks: int = 0
    reason: str = ""


@dataclass(frozen=True, slots=True)
class IngestProgress:
    """How far a run is, by files, bytes (the file sizes) and chunks stored or kept."""

    files_done: int
    files_total: int
    bytes_done: int
    bytes_total: int
    chunks: int


@dataclass(frozen=True, slots=True)
class IngestSummary:
    """What one ingest run did (documents and chunks) and how long it took."""

    files: int
    added: int
    unchanged: int
    removed: int
    skipped: int
    chunks_added: int
    chunks_removed: int
    seconds: float
    changed: int = 0
    chunks_unchanged: int = 0
    missing: int = 0
    skipped_files: tuple[tuple[str, str], ...] = ()

    def line(self) -> str:
        """The one-line summary the CLI prints."""
        return (
            f"files {self.files} · chunks added {self.chunks_added} / unchanged {self.chunks_unchanged} "
            f"/ removed {self.chunks_removed} · {self.seconds:.1f} s"
        )

    @property
    def ingested(self) -> int:
        """Files that are documents of the dataset after the run (added, changed or unchanged)."""
        return self.added + self.changed + self.unchanged

    def skip_counts(self) -> list[tuple[str, int]]:
        """(reason, files) for the skipped files, most frequent first, reasons without their details."""
        counts: dict[str, int] = {}
        for _, reason in self.skipped_files:
            kind = reason.split(" (", 1)[0].strip() or reason
            counts[kind] = counts.get(kind, 0) + 1
        return sorted(counts.items(), key=lambda item: (-item[1], item[0]))


@dataclass(frozen=True, slots=True)
class FileJob:
    """One file to prepare: where it is, its size, and the document already stored for it (if any)."""

    path: Path
    source: str
    size: int
    current: DocumentInfo | None


@dataclass(frozen=True, slots=True)
class ReadSummary:
    """What the writer needs of a read file (the Markdown stays in the worker)."""

    name: str
    title: str
    content_hash: str
    link: str = ""


@dataclass(frozen=True, slots=True)
class PreparedFile:
    """A file read, classified and (when it changed) chunked, with its keyword terms when asked for.

    blank: read fine but holds no text to search (empty, only front matter or headings): skipped, and a
    document stored for it earlier is removed.
    """

    path: Path
    source: str
    read: ReadSummary | None
    reason: str
    outcome: Outcome
    chunks: tuple[Chunk, ...] = ()
    keywords: tuple[str, ...] | None = None
    size: int = 0
    blank: bool = False


EMPTY_FILE = "empty file"
NO_TEXT = "front matter or comments only, no text"
HEADINGS_ONLY = "headings only, no text"


def blank_reason(markdown: str) -> str | None:
    """Why a read file has nothing to search without chunking it, or None when it may have."""
    if not markdown.strip():
        return EMPTY_FILE
    if not body_text(markdown):
        return NO_TEXT
    return None


def groups(jobs: Sequence[FileJob]) -> Iterator[list[FileJob]]:
    """Consecutive jobs in groups of about GROUP_BYTES (at most GROUP_FILES files)."""
    group: list[FileJob] = []
    size = 0
    for job in jobs:
        group.append(job)
        size += job.size
        if size >= GROUP_BYTES or len(group) >= GROUP_FILES:
            yield group
            group, size = [], 0
    if group:
        yield group


def prepare_files(
    jobs: Sequence[FileJob],
    *,
    read: Callable[[Path], SourceDocument],
    max_tokens: int,
    unreadable: tuple[type[BaseException], ...],
    chunk_keywords: ChunkKeywords | None = None,
    content_hash: Callable[[Path], str] | None = None,
) -> list[PreparedFile]:
    """Read, classify and chunk files (blocking; runs in a worker thread or process).

    With content_hash (the hash read() would record, from the file's bytes without parsing them), a file
    whose stored document has the same fingerprint is unchanged before it is parsed. Files without text
    (blank_reason, or no chunk but headings) are skipped as blank; a stored document with no chunks is
    checked again, since only a blank file could have produced it.
    """
    prepared: list[PreparedFile] = []
    for job in jobs:
        try:
            known = unchanged_before_parsing(job, content_hash, max_tokens)
            if known is not None:
                prepared.append(known)
                continue
            document = read(job.path)
        except unreadable as exc:
            reason = str(getattr(exc, "reason", exc))
            prepared.append(PreparedFile(job.path, job.source, None, reason, "skipped", size=job.size))
            continue
        blank = blank_reason(document.markdown)
        notes = tuple(getattr(document, "warnings", ()))
        if blank == EMPTY_FILE and notes:  # not empty on disk: the reader says why it found no text
            blank = notes[0]
        if blank:
            prepared.append(_blank(job, blank))
            continue
        summary = ReadSummary(
            document.name, document.title, document.content_hash, getattr(document, "link", "")
        )
        outcome = classify(job.current, fingerprint(document.content_hash, max_tokens))
        if outcome == "unchanged" and (job.current is None or job.current.chunk_count):
            prepared.append(PreparedFile(job.path, job.source, summary, "", outcome, size=job.size))
            continue
        chunks = tuple(chunk_parts(_parts(document), max_tokens=max_tokens))
        if not chunks:
            prepared.append(_blank(job, HEADINGS_ONLY))
            continue
        if outcome == "unchanged":  # stored without chunks by an older version: write it properly now
            outcome = "changed"
        keywords = None
        if chunk_keywords is not None:
            keywords = tuple(chunk_keywords(document.title or document.name, chunks))
        said = "; ".join(notes)  # what the reader left out (scanned pages)
        prepared.append(
            PreparedFile(job.path, job.source, summary, said, outcome, chunks, keywords, size=job.size)
        )
    return prepared


def unchanged_before_parsing(
    job: FileJob, content_hash: Callable[[Path], str] | None, max_tokens: int
) -> PreparedFile | None:
    """The unchanged outcome of a file whose bytes hash to its stored fingerprint (None: read it)."""
    current = job.current
    if content_hash is None or current is None or not current.chunk_count:
        return None
    raw = content_hash(job.path)
    if fingerprint(raw, max_tokens) != current.content_hash:
        return None
    summary = ReadSummary(current.name, "", raw)
    return PreparedFile(job.path, job.source, summary, "", "unchanged", size=job.size)


def _blank(job: FileJob, reason: str) -> PreparedFile:
    return PreparedFile(job.path, job.source, None, reason, "skipped", size=job.size, blank=True)


def _parts(document: SourceDocument) -> Sequence[DocumentPart]:
    """The document's parts (pages, slides, rows) when its reader gives them, else its Markdown."""
    parts: Sequence[DocumentPart] | None = getattr(document, "parts", None)
    return parts if parts is not None else (DocumentPart(document.markdown),)


def likely_changed(current: DocumentInfo | None, max_tokens: int) -> bool:
    """Whether a file will surely need chunking: it is new, or it was chunked with another size or version.

    (Otherwise it is most likely unchanged: reading and hashing it is all the work.)
    """
    return current is None or not current.content_hash.endswith(fingerprint("", max_tokens))


def document_id(dataset: str, source: str) -> str:
    """Stable id of the document at source (a resolved path) in dataset."""
    return hashlib.sha256(f"{dataset}\n{source}".encode()).hexdigest()[:24]


def fingerprint(content_hash: str, max_tokens: int) -> str:
    """What decides 'unchanged': the content, and the chunk size and chunker version it was cut with (a
    document chunked by an earlier version is chunked again; its unchanged chunks keep their vectors)."""
    return f"{content_hash}/t{max_tokens}/{CHUNKER_VERSION}"


def classify(existing: DocumentInfo | None, new_fingerprint: str) -> Outcome:
    """added (unknown document), unchanged (same fingerprint) or changed."""
    if existing is None:
        return "added"
    return "unchanged" if existing.content_hash == new_fingerprint else "changed"


def gone_documents(
    documents: Sequence[DocumentInfo], roots: Sequence[str], seen_sources: set[str]
) -> list[DocumentInfo]:
    """Documents whose source lies under one of roots but was not found in this run (to prune)."""
    paths = [PurePath(root) for root in roots]
    return [
        doc
        for doc in documents
        if doc.source not in seen_sources and any(PurePath(doc.source).is_relative_to(p) for p in paths)
    ]
