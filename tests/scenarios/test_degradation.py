"""Graceful degradation: when the answer model keeps failing, the user still gets an extractive answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.compose import build_services
from bot.settings import Settings
from core.events import Done, Failed, Notice
from core.models import ConversationKey, Question, RecordStatus
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
        events = [e async for e in services.pipeline.ask(Question(key, "报销的截止期限是多久?", ("kb",)))]
    answer_calls = [r for r in failing_answers.chat_requests if role_of(r) == "answer"]
    assert len(answer_calls) == 2  # the first try and one retry
    done = events[-1]
    assert isinstance(done, Done)
    assert any(isinstance(e, Notice) and e.kind == "degraded" for e in events)
    assert done.record.details["engine"] == "extractive (fallback)"
    assert "model_unavailable" in done.record.details["answer_error"]
    assert done.record.answer and done.record.answer.startswith("模型服务暂时不可用")
    assert "30 天" in done.record.answer and "摘录式回答" in done.record.answer


async def test_without_fallback_the_failure_is_reported_and_nothing_is_answered(
    kb_home: Path, failing_answers: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With KB_ANSWER_FALLBACK=false the question fails clearly and the record is marked failed."""
    monkeypatch.setenv("KB_ANSWER_FALLBACK", "false")
    async with build_services(Settings()) as services:
        key = ConversationKey(source="test", channel_id="no-fallback")
        events = [e async for e in services.pipeline.ask(Question(key, "报销的截止期限是多久?", ("kb",)))]
        failed = events[-1]
        assert isinstance(failed, Failed) and failed.code == "model_unavailable"
        assert "模型服务暂时不可用" in failed.message
        assert failed.record is not None
        stored = await services.store.get_record(failed.record.id)
    assert stored is not None and stored.status == RecordStatus.FAILED and stored.answer is None
