"""What a synced source is, what it yields and what one sync did (typed values, JSON only at the edge)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SOURCE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


@dataclass(frozen=True, slots=True)
class SourceSpec:
    """A registered source: its name, kind (e.g. ``slack-channel``), settings, dataset and schedule.

    every: seconds between scheduled syncs under `kb serve`; 0 syncs only when asked (`kb sources sync`).
    """

    name: str
    kind: str
    dataset: str
    settings: Mapping[str, str] = field(default_factory=dict)
    every: float = 0.0
    created_at: float = 0.0


@dataclass(frozen=True, slots=True)
class SyncedDocument:
    """One document of a source: its stable key there, title, Markdown text, web link and version.

    key: stable across syncs and across ways of reading the same source (a Slack thread is
    ``slack:C123/1700000000.000100`` whether read live or from an export); the document id derives from it.
    version: what changes when the document does (a thread's last activity); compared on the next sync.
    content: a file's own bytes (an attachment: a PDF, a sheet), read by the usual readers instead of markdown.
    """

    key: str
    title: str
    markdown: str
    link: str = ""
    version: str = ""
    content: bytes | None = None


@dataclass(frozen=True, slots=True)
class Fetched:
    """What a fetch found: the documents new or changed since the known versions, the keys still there
    and unchanged (not read again), and what it left out, with why."""

    documents: tuple[SyncedDocument, ...] = ()
    kept: frozenset[str] = frozenset()
    skipped: tuple[tuple[str, str], ...] = ()

    @property
    def live(self) -> frozenset[str]:
        """Every key the source holds now."""
        return self.kept | {document.key for document in self.documents}


@dataclass(frozen=True, slots=True)
class SyncReport:
    """One sync's outcome, as `kb sources sync` prints it and the registry keeps it."""

    source: str
    started_at: float
    seconds: float = 0.0
    added: int = 0
    changed: int = 0
    unchanged: int = 0
    removed: int = 0
    skipped: tuple[tuple[str, str], ...] = ()
    error: str = ""
    chunks_added: int = 0
    chunks_removed: int = 0

    @property
    def ok(self) -> bool:
        return not self.error

    def line(self) -> str:
        """documents: 2 new, 1 changed, 40 unchanged, 1 removed, 0 skipped (3.1 s)."""
        if self.error:
            return f"failed: {self.error}"
        return (
            f"documents: {self.added} new, {self.changed} changed, {self.unchanged} unchanged, "
            f"{self.removed} removed, {len(self.skipped)} skipped ({self.seconds:.1f} s)"
        )

    def to_json(self) -> str:
        fields: dict[str, Any] = {
            "source": self.source,
            "started_at": self.started_at,
            "seconds": self.seconds,
            "added": self.added,
            "changed": self.changed,
            "unchanged": self.unchanged,
            "removed": self.removed,
            "skipped": [list(item) for item in self.skipped],
            "error": self.error,
            "chunks_added": self.chunks_added,
            "chunks_removed": self.chunks_removed,
        }
        return json.dumps(fields, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> SyncReport:
        data = json.loads(text)
        return cls(
            source=str(data.get("source", "")),
            started_at=float(data.get("started_at", 0.0)),
            seconds=float(data.get("seconds", 0.0)),
            added=int(data.get("added", 0)),
            changed=int(data.get("changed", 0)),
            unchanged=int(data.get("unchanged", 0)),
            removed=int(data.get("removed", 0)),
            skipped=tuple((str(a), str(b)) for a, b in data.get("skipped", [])),
            error=str(data.get("error", "")),
            chunks_added=int(data.get("chunks_added", 0)),
            chunks_removed=int(data.get("chunks_removed", 0)),
        )


@dataclass(frozen=True, slots=True)
class SourceState:
    """A source as the registry holds it: its spec, the versions of its documents at the last sync, and
    that sync's report (None before the first)."""

    spec: SourceSpec
    versions: Mapping[str, str] = field(default_factory=dict)
    last: SyncReport | None = None
