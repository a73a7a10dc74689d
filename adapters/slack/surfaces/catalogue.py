"""What the knowledge base holds, as the Slack surfaces show it: datasets with their document counts, last
ingest time and document titles (for the App Home tab and the assistant pane's suggested prompts).

Read through a narrow port (the Chroma knowledge base implements it) and cached for a short while: every
open of the Home tab or of a pane thread would otherwise list every dataset's documents again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from core.errors import KbError
from core.knowledge.ingest_plan import TitledDocument

log = logging.getLogger(__name__)

CACHE_SECONDS = 30.0
TITLES_KEPT = 8


class KnowledgeCatalogue(Protocol):
    """The read side of the knowledge base the Slack surfaces need (ChromaKnowledgeBase has it)."""

    async def list_datasets(self) -> Sequence[str]: ...

    async def list_titled_documents(self, dataset: str) -> list[TitledDocument]:
        """A dataset's documents with their own titles ("" when a document has none)."""
        ...


@dataclass(frozen=True, slots=True)
class DatasetSummary:
    """One dataset as people see it: how many documents, when it last changed, its newest titles."""

    name: str
    documents: int
    chunks: int
    last_ingest: float  # epoch seconds of the newest document version; 0 when unknown
    titles: tuple[str, ...] = ()  # enabled documents' titles, most recently ingested first


def summarise(name: str, documents: Sequence[TitledDocument]) -> DatasetSummary:
    """The summary of a dataset's enabled documents, titled by their own title, else their name (pure)."""
    enabled = sorted((d for d in documents if d.enabled), key=lambda d: (-d.updated_at, d.name))
    return DatasetSummary(
        name=name,
        documents=len(enabled),
        chunks=sum(d.chunk_count for d in enabled),
        last_ingest=max((d.updated_at for d in enabled), default=0.0),
        titles=tuple(dict.fromkeys(d.title or d.name for d in enabled if d.title or d.name))[:TITLES_KEPT],
    )


class Catalogue:
    """Dataset summaries, cached for CACHE_SECONDS; a knowledge base that fails reads as empty (logged)."""

    def __init__(
        self, source: KnowledgeCatalogue | None, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.source = source
        self._clock = clock
        self._cached: tuple[float, list[DatasetSummary]] | None = None

    async def summaries(self) -> list[DatasetSummary]:
        """Every dataset, by name."""
        if self.source is None:
            return []
        now = self._clock()
        if self._cached is not None and now - self._cached[0] < CACHE_SECONDS:
            return self._cached[1]
        try:
            names = sorted(await self.source.list_datasets())
            found = [summarise(name, await self.source.list_titled_documents(name)) for name in names]
        except KbError as exc:
            log.warning("listing the knowledge base for Slack failed: %s", exc.message("en"))
            return self._cached[1] if self._cached is not None else []
        self._cached = (now, found)
        return found

    async def scope(self, datasets: Sequence[str] | None) -> list[DatasetSummary]:
        """The summaries of these datasets (None: every dataset), in that order; unknown names skipped."""
        every = await self.summaries()
        if datasets is None:
            return every
        by_name = {summary.name: summary for summary in every}
        return [by_name[name] for name in dict.fromkeys(datasets) if name in by_name]
