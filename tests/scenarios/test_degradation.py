"""Graceful degradation: when the answer model keeps failing, the user still gets an extractive answer."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from bot.compose import build_services
from bot.settings import Settings
from core.commands import Ask
from core.events import Done, Failed, Notice
from core.models import ConversationKey, ConversationScope, RecordStatus
from tests.model_script import RecordedRequest, Reply
from tests.model_server import ModelServer
from tests.role_responder import RoleResponder, role_of


@pytest.fixture
def failing_answers(model_env: ModelServer, monkeypatch: pytest.MonkeyPatch) -> ModelServer:
    """Every answer call returns HTTP 500; the other roles work."""
    roles = RoleResponder()

    def respond(request: RecordedRequest) -> Reply | str:
        return Reply.failure(500) if role_of(request) == "answer" else roles(request)

    model_env.responder = respond
    monkeypatch.setenv("KB_MODEL_RETRIES", "1")
    return model_env


async def test_model_500_after_retries_gives_the_extractive_answer_with_a_notice(
    kb_home: Path, failing_answers: ModelServer
) -> None:
    """The answer model returns 500 after its retries: an extractive answer with the notice, engine recorded."""
    async with build_services(Settings()) as services:
        key = ConversationKey(source="test", channel_id="degraded")
        events = [
            e
            async for e in services.pipeline.ask(
                Ask(key, "报销的截止期限是多久?", ConversationScope(("kb",)))
            )
        ]
    answer_calls = [r for r in failing_answers.chat_requests if role_of(r) == "answer"]
    assert len(answer_calls) == 2  # the first try and one retry
    done = events[-1]
    assert isinstance(done, Done)
    assert any(isinstance(e, Notice) and e.kind == "degraded" for e in events)
    assert done.record.details.engine == "extractive (fallback)"
    assert "model_unavailable" in done.record.details.answer_error
    assert done.record.answer and done.record.answer.startswith("模型服务暂时不可用")
    assert "30 天" in done.record.answer and "摘录式回答" in done.record.answer


async def test_without_fallback_the_failure_is_reported_and_nothing_is_answered(
    kb_home: Path, failing_answers: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With KB_ANSWER_FALLBACK=false the question fails clearly and the record is marked failed."""
    monkeypatch.setenv("KB_ANSWER_FALLBACK", "false")
    async with build_services(Settings()) as services:
        key = ConversationKey(source="test", channel_id="no-fallback")
        events = [
            e
            async for e in services.pipeline.ask(
                Ask(key, "报销的截止期限是多久?", ConversationScope(("kb",)))
            )
        ]
        failed = events[-1]
        assert isinstance(failed, Failed) and failed.code == "model_unavailable"
        assert "模型服务暂时不可用" in failed.message
        assert failed.record is not None
        stored = await services.store.get_record(failed.record.id)
    assert stored is not None and stored.status == RecordStatus.FAILED and stored.answer is None


async def test_an_answer_stream_cut_without_finish_reason_is_never_stored_as_the_answer(
    kb_home: Path, model_env: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The answer streams half a sentence and the body ends with no finish_reason: the record holds the
    extractive answer with the degraded notice, not the cut text."""
    roles = RoleResponder()

    def respond(request: RecordedRequest) -> Reply | str:
        if role_of(request) == "answer":
            return Reply.ends_without_finish("报销期限是三十", chunks=2)
        return roles(request)

    model_env.responder = respond
    monkeypatch.setenv("KB_MODEL_RETRIES", "1")
    async with build_services(Settings()) as services:
        key = ConversationKey(source="test", channel_id="cut-stream")
        events = [
            e
            async for e in services.pipeline.ask(
                Ask(key, "报销的截止期限是多久?", ConversationScope(("kb",)))
            )
        ]
    done = events[-1]
    assert isinstance(done, Done)
    assert any(isinstance(e, Notice) and e.kind == "degraded" for e in events)
    assert done.record.details.engine == "extractive (fallback)"
    assert "without a finish_reason" in done.record.details.answer_error
    assert done.record.answer and not done.record.answer.endswith("三十")
    assert "30 天" in done.record.answer


async def test_a_hung_auxiliary_model_costs_its_deadline_not_retries_times_timeouts(
    kb_home: Path, model_env: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every auxiliary call hangs: with KB_MODEL_DEADLINE=1 each costs about a second (3 retries × a 90 s
    first-token allowance would be minutes), the rewrite falls back to the extractive one and the question
    is still answered."""
    roles = RoleResponder()

    def respond(request: RecordedRequest) -> Reply | str:
        return roles(request) if role_of(request) == "answer" else Reply.hanging()

    model_env.responder = respond
    monkeypatch.setenv("KB_MODEL_DEADLINE", "1")
    monkeypatch.setenv("KB_MODEL_RETRIES", "3")
    key = ConversationKey(source="test", channel_id="hung-aux")
    started = time.monotonic()
    async with build_services(Settings()) as services:
        first = [
            e
            async for e in services.pipeline.ask(
                Ask(key, "报销的截止期限是多久?", ConversationScope(("kb",)))
            )
        ]
        follow = [e async for e in services.pipeline.ask(Ask(key, "那差旅呢?", ConversationScope(("kb",))))]
    assert isinstance(first[-1], Done) and isinstance(follow[-1], Done)
    assert follow[-1].record.details.rewrite_engine.endswith("(fallback)")
    aux_calls = [r for r in model_env.chat_requests if role_of(r) != "answer"]
    assert aux_calls, "the auxiliary roles were asked"
    assert time.monotonic() - started < 1.5 * len(aux_calls) + 10
