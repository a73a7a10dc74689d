"""The compound example: the deadline is answered with its source, the budget gap gets a second round.

See docs/design.md#the-retrieval-loop.
"""

from __future__ import annotations

from pathlib import Path

from adapters.extractive import ExtractiveEngine
from bot.compose import build_services
from bot.settings import Settings
from core.commands import Ask
from core.events import Assessed, Done, Notice, Retrieving
from core.models import ConversationKey, ConversationScope

QUESTION = "请分别说明行政复议的一般申请期限,以及某乡 2026 年行政审批服务中心的预算金额"


async def test_the_compound_question_searches_the_gap_and_admits_what_is_missing(kb_home: Path) -> None:
    """Round 2 targets the budget gap; the answer cites the sixty-day article and says the budget is unverified."""
    async with build_services(Settings(), engine=ExtractiveEngine()) as services:
        key = ConversationKey(source="test", channel_id="compound")
        events = [e async for e in services.pipeline.ask(Ask(key, QUESTION, ConversationScope(("kb",))))]
    done = events[-1]
    assert isinstance(done, Done), done
    rounds = done.record.details.trace.rounds
    assert len(rounds) >= 2
    assert any("预算" in query for query in rounds[1].queries)
    assert any(isinstance(e, Retrieving) and e.round == 2 for e in events)
    assert any(isinstance(e, Assessed) and not e.sufficient and "预算" in e.missing for e in events)
    assert done.record.details.trace.sufficient is False
    answer = done.record.answer or ""
    assert "六十日" in answer
    assert "行政复议法(2023-09-01)" in [c.document for c in done.record.details.citations]
    assert "资料中未找到" in answer and "预算" in answer.split("资料中未找到")[1]
    assert any(isinstance(e, Notice) for e in events) and answer.endswith(done.record.details.notice)
