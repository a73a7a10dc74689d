"""Record details through the SQL store: rows written before the version, older partial rows, the SQL-side writes.

Run on a real SQLite file and a real PostgreSQL schema (the fixtures of test_sql_store).
"""

from __future__ import annotations

import copy
import json
from dataclasses import replace
from typing import Any

from adapters.store.backends import SqlConversationStore
from core.models import ContextStats, Location, RecordStatus
from core.record import (
    DETAILS_VERSION,
    NO_DETAILS,
    ArchivedAttempt,
    CitedSource,
    PhaseTimings,
    Record,
    RecordDetails,
    UsageTally,
    Verdict,
)
from core.trace import RerankSummary, RetrievalTrace, StopReason
from tests.adapters import test_sql_store
from tests.adapters.details_rows import ANSWERED_AGAIN, FAILED, INTERRUPTED
from tests.adapters.test_sql_store import Backend, add, new_conversation

backend = test_sql_store.backend  # the same fixtures: a fresh SQLite file and PostgreSQL schema
store = test_sql_store.store


async def _stored(
    store: SqlConversationStore, backend: Backend, details: dict[str, Any], *, status: str = "answered"
) -> Record:
    """A record whose details column holds exactly this JSON, written by SQL as earlier code left it."""
    record, _ = await add(store, new_conversation(), "那病假呢?")
    text = json.dumps(details, ensure_ascii=False).replace("'", "''")
    answer = "'年假一般为 5 天 [1]。'" if status == "answered" else "NULL"
    await backend.query(
        f"UPDATE records SET details = '{text}', status = '{status}', answer = {answer} WHERE id = {record.id}"
    )
    read = await store.get_record(record.id)
    assert read is not None
    return read


async def _column(backend: Backend, record_id: int) -> dict[str, Any]:
    """The details column as stored, parsed."""
    [(text,)] = await backend.query(f"SELECT details FROM records WHERE id = {record_id}")
    stored = json.loads(text) if isinstance(text, str) else text
    assert isinstance(stored, dict)
    return stored


def _versioned(details: dict[str, Any]) -> dict[str, Any]:
    """Today's JSON as the typed details write it: the same keys, with "v" at the top and in each attempt, and
    an answered group's (empty) lists of unsupported claims, attributions and quotes for left-out parts, which
    rows before the claim check lack."""
    data = {"v": DETAILS_VERSION, **copy.deepcopy(details)}
    if "engine" in data:
        data.setdefault("unsupported", [])
        data.setdefault("attributions", [])
        data.setdefault("supplied", [])
    for attempt in data.get("previous_answers", []):
        attempt["details"] = _versioned(attempt["details"])
    return data


async def test_an_answered_row_written_before_the_version_reads_back_typed(
    store: SqlConversationStore, backend: Backend
) -> None:
    """Every key of a row the earlier pipeline wrote reads into its typed field, and writes back key for key."""
    record = await _stored(store, backend, ANSWERED_AGAIN)
    details = record.details
    assert (details.lang, details.engine, details.notice) == ("zh", "fake", None)
    assert details.context == ContextStats(
        enabled=True,
        compacted=False,
        revision=3,
        compacted_rounds=3,
        through_record_id=3,
        recent_rounds=1,
        token_budget=600,
        threshold_exceeded=False,
        compaction_reason="under_budget",
        estimated_tokens=560,
    )
    assert details.rewrite_error == "model_unchanged: the model returned the question unchanged"
    assert details.rewrite_engine == "extractive (fallback)" and details.answer_error == ""
    trace = details.trace
    assert trace is not None and trace == RetrievalTrace.from_json(ANSWERED_AGAIN["trace"])
    assert (trace.mode, trace.stop_reason, trace.datasets) == ("multi", StopReason.SUFFICIENT, ("ds",))
    assert trace.complexity is not None and trace.complexity.source == "forced"
    assert trace.rerank == RerankSummary("local", candidates=1, kept=1)
    budget = Location(sheet="Budget", first_row=2, last_row=40)
    assert details.citations == (CitedSource(1, "预算.xlsx", "", "files/budget.xlsx", "h2", budget),)
    assert details.evidence_ids == ("h2",)
    assert details.usage == UsageTally(prompt_tokens=130, completion_tokens=16, model_calls=3)
    assert details.timings == PhaseTimings(
        context=0.001, rewrite=0.0, retrieval=0.0008, generation=0.0001, total=0.0023
    )
    assert details.feedback == (Verdict("slack:T1:U1", "up", 1796188976.9442415),)
    assert (details.failure, details.user_message) == ("", "")

    [attempt] = details.previous_answers
    assert (attempt.status, attempt.rewritten) == (RecordStatus.ANSWERED, "那病假呢?")
    assert attempt.answer is not None and attempt.answer.startswith("模型服务暂时不可用")
    assert attempt.updated_at == 1796188976.94035
    earlier = attempt.details
    assert earlier.answer_error == "model_unavailable: answer model down"
    assert earlier.rewrite_error == "model_truncated: the rewrite was cut"
    assert earlier.engine == "extractive (fallback)"
    assert earlier.notice is not None and earlier.notice.startswith("注意")
    handbook = CitedSource(
        2, "员工手册.pdf", "第三章 考勤", "https://docs.example.com/handbook.pdf", "h1", Location(page=12)
    )
    assert earlier.citations[1] == handbook and earlier.citations[1].is_web()
    assert earlier.context is not None and earlier.context.compacted is True
    assert earlier.context.summary_calls == 1 and earlier.context.compaction_reason == "token_budget_exceeded"
    assert earlier.trace is not None and earlier.trace.stop_reason is StopReason.NO_FOLLOWUP_QUERY
    assert [step.new_paragraph_ids for step in earlier.trace.rounds] == [("h2",), ("h1",)]
    assert earlier.usage == UsageTally(170, 36, 5)
    assert earlier.feedback == (
        Verdict("slack:T1:U1", "down", 1796188976.9407995),
        Verdict("slack:T1:U2", "up", 1796188976.941098),
    )
    assert earlier.previous_answers == ()

    assert RecordDetails.from_json(details.to_json()) == details
    assert details.to_json() == _versioned(ANSWERED_AGAIN)


async def test_failed_and_interrupted_rows_written_before_the_version_read_back_typed(
    store: SqlConversationStore, backend: Backend
) -> None:
    """A failure keeps what the user was told and the phases it reached; an interruption only its reason."""
    failed = (await _stored(store, backend, FAILED, status="failed")).details
    assert failed.failure == "no_knowledge_base: No knowledge base is configured here."
    assert failed.user_message == "这里还没有配置知识库,无法回答。"
    assert failed.timings == PhaseTimings(context=0.001, rewrite=0.0)
    assert failed.context is not None and failed.context.recent_rounds == 2
    assert (failed.engine, failed.citations, failed.usage, failed.trace) == ("", (), None, None)
    assert failed.to_json() == _versioned(FAILED)
    interrupted = (await _stored(store, backend, INTERRUPTED, status="interrupted")).details
    assert interrupted == RecordDetails(failure="interrupted: the bot stopped while answering")
    assert interrupted.to_json() == _versioned(INTERRUPTED)


async def test_the_sql_side_writes_work_on_a_row_written_before_the_version(
    store: SqlConversationStore, backend: Backend
) -> None:
    """Feedback, asking again, completing and failing work in SQL on an earlier row; the reader reads the result."""
    record = await _stored(store, backend, ANSWERED_AGAIN)
    before = record.details
    voted = await store.add_feedback(record.id, person="slack:T1:U0", value="down", at=5.0)
    assert voted is not None
    assert voted.details == replace(before, feedback=(Verdict("slack:T1:U0", "down", 5.0), *before.feedback))
    assert "v" not in await _column(backend, record.id)  # a child write leaves the rest as it was

    reset = await store.reopen_record(record.id, record.conversation_id)
    *earlier, archived = reset.details.previous_answers
    assert abs(archived.updated_at - record.updated_at) < 0.001  # SQLite's JSON keeps 15 digits of a REAL
    kept = ArchivedAttempt(
        RecordStatus.ANSWERED,
        record.answer,
        record.rewritten,
        archived.updated_at,
        replace(voted.details, previous_answers=()),
    )
    assert reset.details == RecordDetails(previous_answers=(*before.previous_answers, kept))
    assert tuple(earlier) == before.previous_answers
    stored = await _column(backend, record.id)
    assert set(stored) == {"v", "previous_answers"} and stored["v"] == DETAILS_VERSION
    assert "v" not in stored["previous_answers"][1]["details"]  # the attempt's details as they were stored

    done = await store.complete_record(
        record.id,
        answer="年假 5 天 [1]。",
        rewritten=None,
        details=RecordDetails(
            lang="zh", engine="fake", evidence_ids=("h1",), timings=PhaseTimings(total=0.5)
        ),
    )
    assert done.details == RecordDetails(
        lang="zh",
        engine="fake",
        evidence_ids=("h1",),
        timings=PhaseTimings(total=0.5),
        previous_answers=reset.details.previous_answers,
    )
    assert (await _column(backend, record.id))["v"] == DETAILS_VERSION

    pending = await _stored(
        store, backend, {"previous_answers": ANSWERED_AGAIN["previous_answers"]}, status="pending"
    )
    cut = await store.fail_record(
        pending.id, status=RecordStatus.INTERRUPTED, reason="interrupted", details=RecordDetails(lang="en")
    )
    assert cut.details == RecordDetails(
        lang="en", failure="interrupted", previous_answers=pending.details.previous_answers
    )
    assert len(cut.details.previous_answers) == 1


async def test_older_partial_and_malformed_rows_read_with_defaults(
    store: SqlConversationStore, backend: Backend
) -> None:
    """Missing keys read as unset, malformed values too; keys this version does not know are ignored."""
    assert (await _stored(store, backend, {})).details == NO_DETAILS
    partial = await _stored(
        store,
        backend,
        {"engine": "model:x", "citations": [{"document": "A", "page": 2}], "trace": {}, "context": {}},
    )
    assert partial.details == RecordDetails(
        engine="model:x",
        citations=(CitedSource(0, "A", location=Location(page=2)),),
        context=ContextStats(),
    )
    malformed = await _stored(
        store,
        backend,
        {
            "v": DETAILS_VERSION + 1,
            "lang": 7,
            "usage": "lots",
            "citations": "x",
            "evidence_ids": "h1",
            "feedback": {"U1": "up", "U2": {"value": "up"}},
            "previous_answers": [{"status": "archived", "details": []}, "x"],
            "timings": {"total": "slow", "context": True},
            "notice": False,
            "shiny": {"new": 1},
        },
    )
    assert malformed.details == RecordDetails(
        feedback=(Verdict("U2", "up", 0.0),),
        previous_answers=(ArchivedAttempt("archived"),),
        timings=PhaseTimings(),
    )
