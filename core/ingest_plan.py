"""Ingestion planning, pure: stable document ids, fingerprints, added/changed/unchanged, what to prune.

Also the types ingestion exchanges: what a reader returns, per-file events and the run's summary.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Literal, Protocol

from core.models import Chunk, DocumentInfo
from core.ports import DocumentIndex

Outcome = Literal["added", "changed", "unchanged", "skipped"]


class BatchDocumentIndex(DocumentIndex, Protocol):
    """A DocumentIndex that can replace several documents in one call (far cheaper per chunk)."""

    async def replace_documents(
        self, dataset: str, items: Sequence[tuple[DocumentInfo, Sequence[Chunk]]], *, embedding_model: str
    ) -> None:
        """replace_document for each (document, chunks), with every new version going live together."""
        ...


class SourceDocument(Protocol):
    """What a reader returns for one file (adapters.document_readers.ReadDocument fits)."""

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
    """One file handled: how far the run is and what happened to the file."""

    done: int
    total: int
    path: str
    outcome: Outcome
    chunks: int = 0
    reason: str = ""


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


def document_id(dataset: str, source: str) -> str:
    """Stable id of the document at source (a resolved path) in dataset."""
    return hashlib.sha256(f"{dataset}\n{source}".encode()).hexdigest()[:24]


def fingerprint(content_hash: str, max_tokens: int) -> str:
    """What decides 'unchanged': the content and the chunk size it was cut with."""
    return f"{content_hash}/t{max_tokens}"


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
