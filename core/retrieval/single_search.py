"""Single-search retrieval (one search with the rewritten question) and the shared search policy."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from core.events import Retrieving
from core.knowledge.search import SearchTiers, tier_for
from core.models import Hit, RetrievalMode, RetrievalOutcome, SearchMode, SearchRequest
from core.ports import Emit, KnowledgeBase
from core.trace import RetrievalTrace, RoundStep, StopReason


@dataclass(frozen=True, slots=True)
class SearchPolicy:
    """How a question becomes a search request: query-length tiers decide top-k and threshold.

    See docs/design.md#query-length-tiers.
    """

    tiers: SearchTiers = field(default_factory=SearchTiers)

    def request(
        self, query: str, datasets: Sequence[str], mode: SearchMode, *, at_least: int = 0
    ) -> SearchRequest:
        """The tier's top-k and threshold for this query; at least ``at_least`` hits deep."""
        limit, threshold = tier_for(query, self.tiers)
        return SearchRequest(
            query=query, datasets=tuple(datasets), mode=mode, threshold=threshold, limit=max(limit, at_least)
        )


def single_search_trace(
    hits: Sequence[Hit], *, query: str, reason: StopReason, run_time: float, sufficient: bool
) -> RetrievalTrace:
    """The trace of a one-round search, in the same shape as the multi-hop loop's."""
    step = RoundStep(
        round=1,
        queries=(query,),
        new_paragraph_ids=tuple(hit.id for hit in hits),
        total_evidence=len(hits),
        sufficient=sufficient,
    )
    return RetrievalTrace(
        mode="single",
        escalated=False,
        rounds=(step,),
        stop_reason=reason,
        sufficient=sufficient,
        run_time=round(run_time, 4),
    )


class SingleSearchRetriever:
    """Retriever that runs exactly one search and makes no assessment call."""

    def __init__(self, kb: KnowledgeBase, *, policy: SearchPolicy | None = None) -> None:
        self._kb = kb
        self._policy = policy or SearchPolicy()

    async def retrieve(
        self,
        question: str,
        *,
        datasets: Sequence[str],
        search_mode: SearchMode,
        retrieval_mode: RetrievalMode,
        emit: Emit,
    ) -> RetrievalOutcome:
        started = time.monotonic()
        if not datasets:
            trace = RetrievalTrace(mode="single", stop_reason=StopReason.NO_DATASETS)
            return RetrievalOutcome(
                hits=(), sufficient=False, stop_reason=StopReason.NO_DATASETS, trace=trace
            )
        await emit(Retrieving(round=1, query=question))
        hits = await self._kb.search(self._policy.request(question, datasets, search_mode))
        sufficient = bool(hits)
        trace = single_search_trace(
            hits,
            query=question,
            reason=StopReason.SINGLE_SEARCH,
            run_time=time.monotonic() - started,
            sufficient=sufficient,
        )
        return RetrievalOutcome(
            hits=tuple(hits), sufficient=sufficient, stop_reason=StopReason.SINGLE_SEARCH, trace=trace
        )
