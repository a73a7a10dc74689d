"""Finding the knowledge base's gaps: read a period's answered records, keep the gaps, group them by topic.

The orchestration `kb gaps` and the App Home (RecentGaps, kept for a while) share: records through the
RecordReader port, the questions' vectors through the Embedder port (the offline encoder), the grouping
(pure, core.insights.gaps) in a worker thread.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from core.insights.gaps import Gap, gap_reasons, group_by_topic, searched_datasets, summarise_gaps, topic_text
from core.ports import Embedder, RecordReader

READ_LIMIT = 10_000  # answered records read per report, newest first


@dataclass(frozen=True, slots=True)
class GapReport:
    """The gaps of a period: how many answered questions were read, the groups, and whether older answered
    questions were left unread because the period held more than the read limit."""

    since: float
    answered: int
    gaps: tuple[Gap, ...]
    truncated: bool = False

    def to_json(self) -> dict[str, object]:
        return {
            "since": self.since,
            "answered": self.answered,
            "truncated": self.truncated,
            "gaps": [gap.to_json() for gap in self.gaps],
        }


async def find_gaps(
    records: RecordReader,
    embedder: Embedder,
    *,
    since: float,
    datasets: Sequence[str] = (),
    limit: int = READ_LIMIT,
) -> GapReport:
    """The gaps among the answered questions asked since `since` (in any of `datasets`; all when empty)."""
    answered = await records.answered_since(since, limit=limit)
    truncated = len(answered) >= limit
    wanted = set(datasets)
    if wanted:
        answered = [r for r in answered if wanted & set(searched_datasets(r))]
    found = [r for r in answered if gap_reasons(r)]
    groups: list[list[int]] = []
    if found:
        vectors = await embedder.embed_documents([topic_text(r) for r in found])
        groups = await asyncio.to_thread(group_by_topic, vectors)
    return GapReport(since, len(answered), tuple(summarise_gaps(found, groups)), truncated)


class RecentGaps:
    """The gaps of the last `days`, found again at most every `ttl` seconds (the Home tab shows them to
    admins each time they open it; grouping embeds every gap's question)."""

    def __init__(
        self,
        records: RecordReader,
        embedder: Embedder,
        *,
        days: float = 30,
        ttl: float = 600,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._records, self._embedder = records, embedder
        self._period, self._ttl, self._clock = days * 86400, ttl, clock
        self._kept: tuple[float, GapReport] | None = None
        self._lock = asyncio.Lock()

    async def __call__(self) -> GapReport:
        async with self._lock:
            now = self._clock()
            if self._kept is None or now - self._kept[0] >= self._ttl:
                report = await find_gaps(self._records, self._embedder, since=now - self._period)
                self._kept = (now, report)
            return self._kept[1]
