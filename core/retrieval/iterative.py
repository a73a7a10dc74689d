"""The routed retriever: one assessed search for single-hop questions, the gap-driven loop for multi-hop.

Every route starts the same way: the (rewritten) question is searched at least ``first_round_depth`` deep
(the depth a single search shows), the whole result is admitted as round 1, and the engine assesses it. A
single-hop question stops there when the assessment says every part is covered; otherwise it escalates into
the loop from round 2 with the assessment's follow-up queries (unless retrieval_mode forced "single": then
the single search is final and, not being sufficient, gets the uncertainty notice). Escalation therefore
depends on what the evidence covers, not on retrieval scores (blend scores are relative and never low).

Multi-hop rounds: run the round's queries (normalised duplicates never run twice), keep at most
``candidates_per_round`` new paragraphs of each follow-up round (best first, deduplicated by id; see
core.retrieval.evidence.LoopLimits) within the evidence budget (tokens and paragraphs), ask the engine to
assess the evidence, take at most ``queries_per_round`` follow-up queries. After each assessment the checks
run in this order: sufficient, evidence budget, no new evidence (from round 2), no follow-up query; a
round with nothing left to search stops with duplicate_query; running out of rounds is max_rounds. A failed
or malformed assessment stops with assessment_error and is never read as sufficient; empty evidence is never
sufficient. Every search emits Retrieving(round, query) and every round Assessed(round, sufficient, missing)
(a failed check as not sufficient).

Whatever the route, all accumulated candidates get ONE final rerank against the full question, other
versions of a dated document move behind the preferred one (core.retrieval.versions), then all are
fitted into the evidence budget with the first search's top ``first_round_depth`` hits kept first: the
rerank may reorder them but never drops them, so the evidence given to the answer is never less than one
plain search shows. Only queries and evidence judgements are traced, never model reasoning.

See docs/design.md#the-retrieval-loop (the stop order: docs/design.md#stop-reasons-and-their-order).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace

from core.budget import clip
from core.errors import KbError
from core.events import Assessed, Retrieving
from core.models import Assessment, Hit, RetrievalMode, RetrievalOutcome, SearchMode
from core.ports import (
    ComplexityClassifier,
    Emit,
    Engine,
    KeyTermCheck,
    KnowledgeBase,
    ReferenceResolver,
    Reranker,
)
from core.retrieval.checked_engine import gap_text
from core.retrieval.complexity import extract_features
from core.retrieval.evidence import (
    MISSING_TOKENS,
    QUESTION_TOKENS,
    LoopLimits,
    LoopState,
    fit_budget,
    pick_queries,
)
from core.retrieval.rerank import LocalReranker
from core.retrieval.routing import RoutingThresholds, route
from core.retrieval.single_search import SearchPolicy
from core.retrieval.versions import prefer_versions
from core.text import detect_language, normalize_query
from core.trace import (
    NO_RERANK,
    RerankSummary,
    RetrievalTrace,
    RoundStep,
    Route,
    RouteDecision,
    StopReason,
)

__all__ = ["IterativeRetriever", "LoopLimits"]
log = logging.getLogger(__name__)


class IterativeRetriever:
    """Retriever that routes each question and runs one search or the bounded multi-hop loop."""

    def __init__(
        self,
        *,
        kb: KnowledgeBase,
        engine: Engine,
        reranker: Reranker | None = None,
        classifier: ComplexityClassifier | None = None,
        policy: SearchPolicy | None = None,
        limits: LoopLimits | None = None,
        thresholds: RoutingThresholds | None = None,
        classifier_timeout: float = 2.0,
        fallback_reranker: Reranker | None = None,
        key_terms: KeyTermCheck | None = None,
        references: ReferenceResolver | None = None,
    ) -> None:
        self._kb = kb
        self._engine = engine
        self._key_terms = key_terms
        self._references = references
        self._reranker: Reranker = reranker or LocalReranker()
        self._fallback_reranker: Reranker = fallback_reranker or LocalReranker()
        self._classifier = classifier
        self._policy = policy or SearchPolicy()
        self._limits = limits or LoopLimits()
        self._thresholds = thresholds or RoutingThresholds()
        self._classifier_timeout = classifier_timeout

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
        question = clip(question, QUESTION_TOKENS, marker=False)  # it is searched for: no marker
        state = LoopState(question=question, lang=detect_language(question), datasets=tuple(datasets))
        features = await asyncio.to_thread(extract_features, question)
        has_datasets = bool(datasets)
        routed = await route(
            question,
            features,
            mode=retrieval_mode,
            engine=self._engine if has_datasets else None,
            classifier=self._classifier if has_datasets else None,
            thresholds=self._thresholds,
            classifier_timeout=self._classifier_timeout,
        )
        state.usage, state.model_calls = routed.usage, routed.model_calls
        decision = routed.decision
        if not has_datasets:
            state.stop, state.missing = StopReason.NO_DATASETS, state.message("no_datasets")
            return self._finish(state, decision, mode=decision.decision, escalated=False, started=started)

        forced_single = decision.decision == "single" and decision.source == "forced"
        first, stop, queries = await self._first_round(state, datasets, search_mode, emit, forced_single)
        if decision.decision == "single":
            if state.sufficient or decision.source == "forced" or stop is not None:
                return await self._finish_single(state, decision, first, stop=stop, started=started)
            await self._loop(state, datasets, search_mode, emit, queries=queries)
            return await self._finish_multi(state, decision, first, escalated=True, started=started)

        if stop is None:
            await self._loop(state, datasets, search_mode, emit, queries=queries)
        else:
            state.stop = stop
        return await self._finish_multi(state, decision, first, escalated=False, started=started)

    async def _first_round(
        self, state: LoopState, datasets: Sequence[str], mode: SearchMode, emit: Emit, forced_single: bool
    ) -> tuple[list[str], StopReason | None, list[str]]:
        """Search the question at the single-search depth, admit it whole, assess it.

        A question forced to one search (retrieval_mode=single) is judged by the key-term check alone when
        one is configured: no model call, since nothing would be searched next anyway.
        Returns (ids of the first search's hits, best first; the stop reason if the loop should not go on;
        the follow-up queries).
        """
        question = state.question
        state.searched[normalize_query(question)] = question
        await emit(Retrieving(round=1, query=question))
        request = self._policy.request(question, datasets, mode, at_least=self._limits.first_round_depth)
        hits = await self._kb.search(request)
        judge = self._judge_key_terms if forced_single and self._key_terms is not None else self._assess
        stop, queries = await self._round(state, 1, [question], hits, emit, judge=judge)
        return [hit.id for hit in hits], stop, queries

    async def _judge_key_terms(self, state: LoopState) -> Assessment | None:
        """The deterministic verdict: sufficient when every part's key terms are in the evidence."""
        assert self._key_terms is not None
        parts = await self._key_terms.unsupported_parts(state.question, list(state.evidence.values()))
        return Assessment(sufficient=not parts, missing=gap_text(parts, state.lang) if parts else "")

    async def _search_round(
        self,
        state: LoopState,
        queries: Sequence[str],
        datasets: Sequence[str],
        mode: SearchMode,
        number: int,
        emit: Emit,
    ) -> tuple[list[str], list[Hit]]:
        actual: list[str] = []
        found: list[Hit] = []
        for query in queries:
            key = normalize_query(query)
            if not query.strip() or not key or key in state.searched:
                continue
            state.searched[key] = query
            actual.append(query)
            await emit(Retrieving(round=number, query=query))
            found.extend(await self._kb.search(self._policy.request(query, datasets, mode)))
        return actual, found

    async def _assess(self, state: LoopState) -> Assessment | None:
        state.model_calls += 1
        try:
            assessment, usage = await self._engine.assess(
                state.question, list(state.evidence.values()), list(state.searched.values())
            )
        except KbError:
            return None
        state.usage = state.usage + usage
        valid = (
            isinstance(assessment, Assessment)
            and isinstance(assessment.sufficient, bool)
            and isinstance(assessment.missing, str | None)
            and isinstance(assessment.queries, tuple | list)
        )
        return assessment if valid else None

    async def _round(
        self,
        state: LoopState,
        number: int,
        actual: list[str],
        found: Sequence[Hit],
        emit: Emit,
        *,
        judge: Callable[[LoopState], Awaitable[Assessment | None]] | None = None,
    ) -> tuple[StopReason | None, list[str]]:
        """Admit a round's hits, assess, record the step; (stop reason or None to go on, next queries)."""
        limits = self._limits
        added, exhausted = state.admit(found, limits, first=number == 1)
        referenced: list[str] = []
        if not exhausted and added:
            referenced, exhausted = await self._follow(state, [state.evidence[i] for i in added])
        step = RoundStep(
            round=number,
            queries=tuple(actual),
            new_paragraph_ids=(*added, *referenced),
            total_evidence=len(state.evidence),
            referenced_ids=tuple(referenced),
        )
        assessment = await (judge or self._assess)(state)
        if assessment is None:
            state.sufficient, state.partial, state.missing = False, False, state.message("assessment_error")
            state.rounds.append(replace(step, sufficient=False, missing=state.missing))
            await emit(Assessed(round=number, sufficient=False, missing=state.missing))
            return StopReason.ASSESSMENT_ERROR, []
        state.sufficient = assessment.sufficient and bool(state.evidence)
        state.partial = assessment.partial and not state.sufficient and bool(state.evidence)
        if state.sufficient:
            state.missing = ""
        else:
            gap = clip(assessment.missing or "", MISSING_TOKENS)
            state.missing = gap or (state.message("no_evidence") if not state.evidence else "")
        queries = pick_queries(list(assessment.queries), set(state.searched), limits.queries_per_round)
        completed = replace(
            step,
            sufficient=state.sufficient,
            missing=state.missing,
            next_queries=tuple(queries),
            overruled=assessment.overruled,  # the model said sufficient; the key-term check did not agree
            partial=state.partial,
        )
        state.rounds.append(completed)
        await emit(Assessed(round=number, sufficient=state.sufficient, missing=state.missing))
        if state.sufficient:
            return StopReason.SUFFICIENT, queries
        if exhausted:
            return StopReason.EVIDENCE_BUDGET, queries
        if number > 1 and not added and not referenced:
            return StopReason.NO_NEW_EVIDENCE, queries
        if not queries:
            return StopReason.NO_FOLLOWUP_QUERY, queries
        return None, queries

    async def _follow(self, state: LoopState, new: Sequence[Hit]) -> tuple[list[str], bool]:
        """Admit the paragraphs the round's new evidence refers to (cited articles, documents it names):
        (their ids, evidence budget exhausted). A failing lookup adds nothing."""
        limits = self._limits
        if self._references is None or limits.references_per_round == 0:
            return [], False
        try:
            found = await self._references.referenced(
                new, query=state.question, datasets=state.datasets, limit=limits.references_per_round
            )
        except KbError as exc:
            log.warning("following references failed (%s); going on without them", exc.code)
            return [], False
        capped = replace(limits, candidates_per_round=limits.references_per_round)
        return state.admit(found, capped, first=False)

    async def _loop(
        self,
        state: LoopState,
        datasets: Sequence[str],
        mode: SearchMode,
        emit: Emit,
        *,
        queries: list[str],
    ) -> None:
        """Rounds 2..max_rounds after an insufficient first round."""
        state.stop = StopReason.MAX_ROUNDS
        for number in range(2, self._limits.max_rounds + 1):
            actual, found = await self._search_round(state, queries, datasets, mode, number, emit)
            if not actual:
                state.stop = StopReason.DUPLICATE_QUERY
                return
            stop, queries = await self._round(state, number, actual, found, emit)
            if stop is not None:
                state.stop = stop
                return

    async def _rerank(
        self, question: str, hits: Sequence[Hit], first: Sequence[str]
    ) -> tuple[list[Hit], RerankSummary]:
        summary = RerankSummary(method=getattr(self._reranker, "name", type(self._reranker).__name__))
        try:
            ranked = await self._reranker.rerank(question, hits)
        except KbError as exc:
            ranked = await self._fallback_reranker.rerank(question, hits)
            fallback_name = getattr(self._fallback_reranker, "name", type(self._fallback_reranker).__name__)
            summary = RerankSummary(method=fallback_name, fallback_from=summary.method, error=exc.code)
        ranked = prefer_versions(question, ranked)
        kept = fit_budget(ranked, self._limits, keep=first[: self._limits.first_round_depth])
        return kept, replace(summary, candidates=len(hits), kept=len(kept))

    async def _finish_single(
        self,
        state: LoopState,
        decision: RouteDecision,
        first: Sequence[str],
        *,
        stop: StopReason | None,
        started: float,
    ) -> RetrievalOutcome:
        hits = list(state.evidence.values())
        ranked, rerank = await self._rerank(state.question, hits, first)
        reason = (
            StopReason.ASSESSMENT_ERROR if stop is StopReason.ASSESSMENT_ERROR else StopReason.SINGLE_SEARCH
        )
        trace = RetrievalTrace(
            mode="single",
            escalated=False,
            complexity=decision,
            rounds=tuple(state.rounds),
            stop_reason=reason,
            sufficient=state.sufficient,
            missing=state.missing,
            partial=state.partial,
            rerank=rerank,
            run_time=round(time.monotonic() - started, 4),
        )
        return RetrievalOutcome(
            hits=tuple(ranked),
            sufficient=state.sufficient,
            stop_reason=reason,
            missing=state.missing,
            partial=state.partial,
            trace=trace,
            usage=state.usage,
            model_calls=state.model_calls,
        )

    async def _finish_multi(
        self,
        state: LoopState,
        decision: RouteDecision,
        first: Sequence[str],
        *,
        escalated: bool,
        started: float,
    ) -> RetrievalOutcome:
        ranked, rerank = await self._rerank(state.question, list(state.evidence.values()), first)
        return self._finish(
            state, decision, mode="multi", escalated=escalated, started=started, hits=ranked, rerank=rerank
        )

    def _finish(
        self,
        state: LoopState,
        decision: RouteDecision,
        *,
        mode: Route,
        escalated: bool,
        started: float,
        hits: Sequence[Hit] = (),
        rerank: RerankSummary = NO_RERANK,
    ) -> RetrievalOutcome:
        trace = RetrievalTrace(
            mode=mode,
            escalated=escalated,
            complexity=decision,
            rounds=tuple(state.rounds),
            stop_reason=state.stop,
            sufficient=state.sufficient,
            missing=state.missing,
            partial=state.partial,
            rerank=rerank,
            run_time=round(time.monotonic() - started, 4),
        )
        return RetrievalOutcome(
            hits=tuple(hits),
            sufficient=state.sufficient,
            stop_reason=state.stop,
            missing=state.missing,
            partial=state.partial,
            trace=trace,
            usage=state.usage,
            model_calls=state.model_calls,
        )
