"""Ask every evaluation question through the real pipeline, each in a fresh conversation, and score it.

Per question: the earlier ``turns`` are asked first in the same conversation (setup, not scored), then the
baseline — one plain search of the question as typed, depth 10, same mode and query-length threshold as
`kb search` — then the question itself. Gold is looked for in the baseline, in the final evidence given to
the answer, in any search of this question's retrieval, and in the paragraphs the answer cites.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from bot.evaluation.matching import Paragraph, found_gold, keywords_present
from bot.evaluation.observers import CountingEngine, RecordingKnowledgeBase
from bot.evaluation.questions import EvalQuestion
from core.answering.answer import cited_numbers
from core.commands import Ask
from core.events import Failed
from core.knowledge.search import SearchTiers, tier_for
from core.models import (
    ConversationKey,
    ConversationScope,
    Hit,
    RetrievalMode,
    SearchMode,
    SearchRequest,
)
from core.pipeline import Pipeline
from core.record import Record

BASELINE_DEPTH = 10


@dataclass
class QuestionResult:
    """What became of one question (JSON-ready through to_dict)."""

    id: str
    type: str
    question: str
    gold: list[str]
    expect_notice: bool
    status: str = "answered"
    error: str = ""
    record_id: int | None = None
    rewritten: str = ""
    route: str = ""
    route_source: str = ""
    escalated: bool = False
    rounds: int = 0
    stop_reason: str = ""
    notice: bool = False
    missing: str = ""  # what the final assessment judged missing (the notice names it)
    engine: str = ""
    baseline_found: list[bool] = field(default_factory=list)
    final_found: list[bool] = field(default_factory=list)
    any_round_found: list[bool] = field(default_factory=list)
    cited_found: list[bool] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    keywords_found: list[bool] = field(default_factory=list)
    cited_documents: list[str] = field(default_factory=list)
    evidence_documents: list[str] = field(default_factory=list)
    calls: dict[str, int] = field(default_factory=dict)
    assessments_insufficient: int = 0
    overruled: int = 0  # rounds whose model verdict the key-term check reversed
    unsupported: list[str] = field(default_factory=list)  # claims of the answer no source holds
    attributions: dict[str, int] = field(
        default_factory=dict
    )  # sentences by how they were tied (kept, added…)
    left_out: list[str] = field(default_factory=list)  # parts a model's answer left out, quoted under it
    claims_seconds: float = 0.0  # the claim check's share of the answer's time
    seconds: float = 0.0
    answer: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The per-question line of `--json`."""
        return asdict(self)


def _paragraph(hit: Hit) -> Paragraph:
    return Paragraph(hit.id, hit.document_name, hit.content)


def score_record(
    item: EvalQuestion,
    result: QuestionResult,
    record: Record,
    *,
    baseline: Sequence[Hit],
    searched: dict[str, Hit],
) -> None:
    """Fill the result from the answered record and the hits seen (pure apart from mutating result)."""
    details = record.details
    trace = details.trace
    evidence = [searched[hit_id] for hit_id in details.evidence_ids if hit_id in searched]
    answer = record.answer or ""
    cited = [evidence[n - 1] for n in cited_numbers(answer, len(evidence))]
    result.record_id = record.id
    result.rewritten = record.rewritten or ""
    if trace is not None:
        result.route = trace.mode
        result.route_source = trace.complexity.source if trace.complexity else ""
        result.escalated = trace.escalated
        result.rounds = len(trace.rounds)
        result.overruled = sum(1 for step in trace.rounds if step.overruled)
        result.stop_reason = str(trace.stop_reason)
        result.missing = "" if trace.sufficient else trace.missing
    result.notice = bool(details.notice)
    result.engine = details.engine
    result.unsupported = [claim.text for claim in details.unsupported]
    result.attributions = dict(Counter(item.how for item in details.attributions))
    result.left_out = list(dict.fromkeys(quote.part for quote in details.supplied))
    result.claims_seconds = (details.timings.claims or 0.0) if details.timings else 0.0
    result.baseline_found = found_gold(item.gold, map(_paragraph, baseline))
    result.final_found = found_gold(item.gold, map(_paragraph, evidence))
    result.any_round_found = found_gold(item.gold, map(_paragraph, searched.values()))
    result.cited_found = found_gold(item.gold, map(_paragraph, cited))
    result.keywords_found = keywords_present(answer, item.answer_keywords)
    result.cited_documents = list(dict.fromkeys(hit.document_name for hit in cited))
    result.evidence_documents = list(dict.fromkeys(hit.document_name for hit in evidence))
    result.answer = answer


@dataclass(frozen=True, slots=True)
class RunOptions:
    """How the questions are asked."""

    datasets: tuple[str, ...]
    search_mode: SearchMode
    retrieval_mode: RetrievalMode | None = None
    tiers: SearchTiers = field(default_factory=SearchTiers)


class EvalRunner:
    """Runs questions one by one through a pipeline whose knowledge base and engine are observed."""

    def __init__(
        self,
        pipeline: Pipeline,
        kb: RecordingKnowledgeBase,
        engine: CountingEngine,
        options: RunOptions,
    ) -> None:
        self._pipeline = pipeline
        self._kb = kb
        self._engine = engine
        self._options = options
        self._run_id = uuid.uuid4().hex[:8]

    def _question(self, item: EvalQuestion, text: str) -> Ask:
        key = ConversationKey(source="eval", channel_id=self._run_id, thread_ts=item.id)
        scope = ConversationScope(
            datasets=self._options.datasets,
            search_mode=self._options.search_mode,
            retrieval_mode=self._options.retrieval_mode,
        )
        return Ask(conversation=key, text=text, scope=scope)

    async def _baseline(self, text: str) -> list[Hit]:
        _, threshold = tier_for(text, self._options.tiers)
        request = SearchRequest(
            query=text,
            datasets=self._options.datasets,
            mode=self._options.search_mode,
            threshold=threshold,
            limit=BASELINE_DEPTH,
        )
        return list(await self._kb.search(request))

    async def run_one(self, item: EvalQuestion) -> QuestionResult:
        """Ask one question (after its turns) and score it."""
        result = QuestionResult(
            id=item.id,
            type=item.type,
            question=item.question,
            gold=[gold.label() for gold in item.gold],
            expect_notice=item.expect_notice,
            keywords=list(item.answer_keywords),
        )
        for turn in item.turns:
            earlier = await self._pipeline.answer(self._question(item, turn))
            if isinstance(earlier, Failed):
                result.status, result.error = "failed", f"turn failed: {earlier.code}: {earlier.message}"
                return result
        baseline = await self._baseline(item.question)
        self._kb.reset()
        self._engine.reset()
        started = time.perf_counter()
        outcome = await self._pipeline.answer(self._question(item, item.question))
        result.seconds = round(time.perf_counter() - started, 4)
        result.calls = dict(self._engine.calls)
        result.assessments_insufficient = sum(not a.sufficient for a in self._engine.assessments)
        if isinstance(outcome, Failed):
            result.status, result.error = "failed", f"{outcome.code}: {outcome.message}"
            result.baseline_found = found_gold(item.gold, map(_paragraph, baseline))
            return result
        score_record(item, result, outcome, baseline=baseline, searched=dict(self._kb.hits))
        return result

    async def run(
        self, items: Sequence[EvalQuestion], *, progress: Callable[[QuestionResult], None] | None = None
    ) -> list[QuestionResult]:
        """Every question in order."""
        results = []
        for item in items:
            result = await self.run_one(item)
            results.append(result)
            if progress is not None:
                progress(result)
        return results
