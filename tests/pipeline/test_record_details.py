"""Record details as typed values: a round trip, what to_json leaves out, and the keys the pipeline stores."""

from __future__ import annotations

from typing import Any

from core.commands import Ask, AskAgain, GiveFeedback
from core.conversation.compaction import CompactingContextLoader
from core.conversation.locks import LocalConversationLock
from core.errors import ModelTruncated, ModelUnavailable
from core.events import Failed
from core.models import Assessment, ContextStats, ConversationScope, Hit, Location, RecordStatus
from core.pipeline import Pipeline, PipelineLimits
from core.record import (
    DETAILS_VERSION,
    NO_DETAILS,
    ArchivedAttempt,
    Attribution,
    CitedSource,
    PhaseTimings,
    Record,
    RecordDetails,
    SuppliedQuote,
    UnsupportedClaim,
    UsageTally,
    Verdict,
)
from core.retrieval.iterative import IterativeRetriever
from core.trace import RerankSummary, RetrievalTrace, RoundStep, StopReason
from tests.adapters.details_rows import ANSWERED_AGAIN, FAILED
from tests.compaction.conftest import chinese
from tests.fakes import FakeEngine, FakeKnowledgeBase, InMemoryConversationStore
from tests.pipeline.conftest import KEY

EVERYTHING = RecordDetails(
    lang="en",
    context=ContextStats(
        enabled=True,
        compacted=True,
        revision=2,
        compacted_rounds=4,
        through_record_id=9,
        recent_rounds=1,
        token_budget=6000,
        threshold_exceeded=True,
        compaction_reason="token_budget_exceeded",
        estimated_tokens=5100,
        summary_calls=2,
        compaction_error="context_conflict",
    ),
    rewrite_error="model_truncated: cut",
    rewrite_engine="extractive (fallback)",
    trace=RetrievalTrace(
        mode="multi",
        rounds=(RoundStep(1, ("leave",), ("p1",), 1, sufficient=True),),
        stop_reason=StopReason.SUFFICIENT,
        sufficient=True,
        rerank=RerankSummary("local", 3, 1),
        rewritten="How many days of leave?",
        datasets=("hr",),
        search_mode="blend",
    ),
    answer_error="model_unavailable: down",
    engine="extractive (fallback)",
    notice="Not verified.",
    citations=(
        CitedSource(1, "Handbook.pdf", "Leave", "https://x.example/h.pdf", "p1", Location(page=12)),
        CitedSource(3, "Budget.xlsx", "", "b.xlsx", "p3", Location(sheet="B", first_row=2, last_row=4)),
    ),
    evidence_ids=("p1", "p2", "p3"),
    unsupported=(UnsupportedClaim("九十日", "number", "应在九十日内提出。"),),
    attributions=(Attribution("年假 5 天。", 1, "corrected", 0.8),),
    supplied=(SuppliedQuote("病假有几天", "每年 12 天带薪病假。", 2),),
    usage=UsageTally(100, 20, 4),
    timings=PhaseTimings(context=0.1, rewrite=0.2, retrieval=0.3, generation=0.4, claims=0.01, total=1.0),
    failure="",
    user_message="",
    feedback=(Verdict("slack:T1:U1", "up", 1.5), Verdict("slack:T1:U2", "down", 2.5)),
    previous_answers=(
        ArchivedAttempt(
            RecordStatus.INTERRUPTED,
            None,
            None,
            3.0,
            RecordDetails(lang="en", failure="interrupted", timings=PhaseTimings(context=0.1)),
        ),
    ),
)


def test_every_field_survives_a_round_trip_through_json() -> None:
    """to_json then from_json gives back the same value, every field set; failure fields too."""
    assert RecordDetails.from_json(EVERYTHING.to_json()) == EVERYTHING
    failed = RecordDetails(
        lang="zh", failure="model_unavailable: x", user_message="稍后再试", timings=PhaseTimings()
    )
    assert RecordDetails.from_json(failed.to_json()) == failed


def test_to_json_writes_the_version_and_only_what_is_set() -> None:
    """Unset fields stay out of the JSON (a merging store keeps its own); an answer's group is written whole."""
    assert NO_DETAILS.to_json() == {"v": DETAILS_VERSION}
    assert RecordDetails(engine="fake").to_json() == {
        "v": DETAILS_VERSION,
        "engine": "fake",
        "notice": None,
        "citations": [],
        "evidence_ids": [],
        "unsupported": [],
        "attributions": [],
        "supplied": [],
    }
    assert RecordDetails(timings=PhaseTimings(context=0.5)).to_json() == {
        "v": DETAILS_VERSION,
        "timings": {"context": 0.5},
    }
    stored = EVERYTHING.to_json()
    assert stored["citations"][1] == {
        "n": 3,
        "document": "Budget.xlsx",
        "heading": "",
        "source": "b.xlsx",
        "sheet": "B",
        "row_start": 2,
        "row_end": 4,
        "paragraph_id": "p3",
    }
    assert stored["feedback"] == {
        "slack:T1:U1": {"value": "up", "at": 1.5},
        "slack:T1:U2": {"value": "down", "at": 2.5},
    }
    assert stored["previous_answers"][0]["details"]["failure"] == "interrupted"


# written by every answered record since the claim check (supplied: since the quotes for left-out parts)
ADDED_KEYS = {"unsupported", "attributions", "supplied"}
ADDED_TIMINGS = {"claims"}


def _keys(details: dict[str, Any]) -> dict[str, Any]:
    """The key structure of stored details: top-level, context, usage, timings and a citation's keys."""
    return {
        "top": set(details) - {"v"},
        "context": set(details["context"]),
        "usage": set(details.get("usage") or ()),
        "timings": set(details["timings"]),
        "citation": set(details["citations"][0]) if details.get("citations") else set(),
    }


async def _answer_as_the_rows_were_made() -> tuple[Record, Record]:
    """The scenario of tests/adapters/details_rows.py, by today's pipeline: the record asked again, the failure."""
    store, engine, fallback = InMemoryConversationStore(), FakeEngine(), FakeEngine()
    fallback.name = "extractive"
    handbook = Location(page=12)
    budget = Location(sheet="Budget", first_row=2, last_row=40)
    kb = FakeKnowledgeBase(
        [
            Hit(
                "h1", "年假一般为 5 天,入职满一年后享受。", 0.0, "ds", "d1", "员工手册.pdf", location=handbook
            ),
            Hit("h2", "病假需要提供医院证明。", 0.0, "ds", "d2", "预算.xlsx", location=budget),
        ]
    )
    pipeline = Pipeline(
        records=store,
        lock=LocalConversationLock(),
        context_loader=CompactingContextLoader(store=store, engine=engine, recent_tokens=600),
        retriever=IterativeRetriever(kb=kb, engine=engine),
        engine=engine,
        fallback_engine=fallback,
        limits=PipelineLimits(unsupported_claims="off"),  # the earlier pipeline checked no claims
    )
    scope = ConversationScope(("ds",), retrieval_mode="multi")
    for index in range(4):
        engine.answers.append([f"第{index + 1}答:" + chinese(300, offset=index)])
        await pipeline.answer(Ask(KEY, f"年假第{index + 1}问", scope))
    engine.rewrites.append(ModelTruncated("the rewrite was cut"))
    engine.assessments.append(Assessment(sufficient=False, missing="病假证明的要求", queries=("病假 证明",)))
    engine.assessments.append(Assessment(sufficient=False, missing="病假证明的要求"))
    engine.answers.append(ModelUnavailable("answer model down"))
    fallback.answers.append(["年假 5 天 [1],病假见 [2]。"])
    answered = await pipeline.answer(Ask(KEY, "那病假呢?", scope))
    assert isinstance(answered, Record)
    await pipeline.feedback(GiveFeedback(answered.id, "slack:T1:U1", "down"))
    again = await pipeline.answer(AskAgain(KEY, answered.id, scope))
    assert isinstance(again, Record) and len(again.details.previous_answers) == 1
    failed = await pipeline.answer(Ask(KEY, "没有知识库的问题?", ConversationScope(())))
    assert isinstance(failed, Failed) and failed.record is not None
    return again, failed.record


async def test_the_pipeline_stores_the_keys_the_rows_written_before_the_version_hold() -> None:
    """Through the same scenario, the typed pipeline's details have the keys of today's rows (plus "v"), and
    only the keys added since: the claim check's "unsupported" and its timing."""
    again, failed = await _answer_as_the_rows_were_made()
    archived = _keys(again.details.previous_answers[0].details.to_json())
    assert archived["top"] - ADDED_KEYS == _keys(ANSWERED_AGAIN["previous_answers"][0]["details"])["top"]
    assert (
        archived["timings"] - ADDED_TIMINGS
        == _keys(ANSWERED_AGAIN["previous_answers"][0]["details"])["timings"]
    )
    assert archived["top"] >= ADDED_KEYS and archived["timings"] >= ADDED_TIMINGS
    assert again.details.previous_answers[0].details.to_json()["v"] == DETAILS_VERSION
    answered = again.details.to_json()
    assert set(answered) - {"v"} - ADDED_KEYS == set(ANSWERED_AGAIN) - {"feedback"}
    assert again.details.answer_error == "" and again.details.rewrite_error.startswith("model_unchanged")
    assert _keys(failed.details.to_json()) == _keys(FAILED)
    assert failed.details.user_message == "这里还没有配置知识库,无法回答。"
