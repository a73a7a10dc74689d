"""Follow-up questions keep their subject: the Java example and the reconsideration example.

See docs/design.md#follow-up-rewrite.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.extractive import ExtractiveEngine
from bot.compose import build_services
from bot.settings import Settings
from core.commands import Ask
from core.events import Done, Progress
from core.models import ConversationKey, ConversationScope
from core.record import Record
from tests.model_server import ModelServer
from tests.role_responder import RoleResponder

KEY = ConversationKey(source="test", channel_id="followups")


async def _ask(services: object, text: str) -> tuple[Record, list[Progress]]:
    events = [e async for e in services.pipeline.ask(Ask(KEY, text, ConversationScope(("kb",))))]  # type: ignore[attr-defined]
    assert isinstance(events[-1], Done), events[-1]
    return events[-1].record, events


def _documents(record: Record) -> list[str]:
    return [c.document for c in record.details.citations]


@pytest.fixture
def responder(model_env: ModelServer) -> RoleResponder:
    """The model server answers each role; rewrites are scripted like a real model's."""
    script = RoleResponder(
        rewrites={
            "那它们各自占用多少内存": "Java 基本数据类型各自占用多少内存",
            "如果因不可抗力耽误了这个期限": "行政复议申请期限因不可抗力耽误时应当如何计算",
        }
    )
    model_env.responder = script
    return script


async def test_java_follow_up_retrieves_the_memory_paragraph_through_the_rewrite(
    kb_home: Path, responder: RoleResponder
) -> None:
    """ "那它们各自占用多少内存" after the Java question is rewritten and retrieves the memory-size paragraph."""
    async with build_services(Settings()) as services:
        first, _ = await _ask(services, "Java 有哪些基本数据类型")
        assert responder.calls.count("rewrite") == 0  # a first question makes no rewrite call
        second, _ = await _ask(services, "那它们各自占用多少内存?")
    assert responder.calls.count("rewrite") == 1
    assert second.rewritten == "Java 基本数据类型各自占用多少内存"
    evidence = second.details.trace.rounds[0].new_paragraph_ids
    assert evidence, "the rewritten question found nothing"
    top = second.details.citations[0]
    assert top.document == "Java基本数据类型" and "内存" in top.heading
    assert first.id < second.id


async def test_reconsideration_follow_up_keeps_the_topic(kb_home: Path, responder: RoleResponder) -> None:
    """The force-majeure follow-up after the deadline question is still answered from 行政复议法."""
    async with build_services(Settings()) as services:
        await _ask(services, "行政复议的一般申请期限是多久?")
        second, _ = await _ask(services, "如果因不可抗力耽误了这个期限,应当如何计算?")
    assert second.rewritten and "行政复议" in second.rewritten
    assert "行政复议法(2023-09-01)" in _documents(second)


@pytest.mark.parametrize(
    ("first", "follow_up", "expected_document", "expected_words"),
    [
        ("Java 有哪些基本数据类型", "那它们各自占用多少内存?", "Java基本数据类型", ["Java", "内存"]),
        (
            "行政复议的一般申请期限是多久?",
            "如果因不可抗力耽误了这个期限,应当如何计算?",
            "行政复议法(2023-09-01)",
            ["行政复议", "不可抗力"],
        ),
    ],
)
async def test_the_extractive_engine_rewrites_the_same_follow_ups(
    kb_home: Path, first: str, follow_up: str, expected_document: str, expected_words: list[str]
) -> None:
    """With no model at all, the extractive rewrite carries the subject and retrieval finds the right source."""
    async with build_services(Settings(), engine=ExtractiveEngine()) as services:
        await _ask(services, first)
        second, _ = await _ask(services, follow_up)
    assert second.rewritten and all(word in second.rewritten for word in expected_words)
    assert expected_document in _documents(second)
