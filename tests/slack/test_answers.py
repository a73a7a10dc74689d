"""Answering in threads, on both paths (edited in place, and natively streamed): progress, final message,
splitting, queueing, concurrency, failures.

Progress lines: docs/design.md#progress-lines-and-the-trace-summary.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from adapters.slack.delivery.ledger import DeliveryState
from core.commands import Ask
from core.events import Accepted, ContextLoading, Progress
from core.models import RecordStatus
from core.trace import StopReason
from tests.slack.harness import FAST, NATIVE, SlackHarness, progress_seen
from tests.stored import stored_question


@pytest.fixture(params=["edit", "native"])
async def slack(request: pytest.FixtureRequest) -> AsyncIterator[SlackHarness]:
    """A started bot answering by editing in place, or by native streaming, against a fresh mock Slack."""
    async with SlackHarness.running(options=FAST if request.param == "edit" else NATIVE) as harness:
        yield harness
    records = harness.pipeline.store.records.values()
    assert all(
        harness.delivery_of(r) is None or harness.delivery_of(r).state == DeliveryState.DELIVERED
        for r in records
    )
    if request.param == "edit":
        assert not harness.mock.calls_to("chat.startStream")


async def test_a_mention_gets_a_placeholder_then_phase_edits_then_the_final_answer(
    slack: SlackHarness,
) -> None:
    """The reply shows the localized phases while it works (edits, or a task timeline) and ends as the
    sourced answer with its trace summary."""
    slack.pipeline.script(
        "How do I deploy?",
        answer="Run **make deploy** [1].",
        step_delay=0.15,
        rounds=[("deploy", False, "the rollback steps"), ("rollback", True, "")],
    )
    assert await slack.event(slack.mention("How do I deploy?", ts="1000.000100")) == 200
    await slack.bot.wait_idle(5)
    [reply] = slack.mock.thread("C1", "1000.000100")
    seen = progress_seen(reply)
    assert "round 1: “deploy”" in seen.lower() or "Still missing: the rollback steps" in seen
    final = reply.block_text()
    assert "make deploy" in final and "[1]" in final
    assert "<https://docs.example.com/guide|Guide> › Setup" in final
    assert "Retrieval: 2 rounds · evidence sufficient" in final
    assert "⏳" not in final
    statuses = slack.mock.calls_to("assistant.threads.setStatus")
    assert statuses[0].params["thread_ts"] == "1000.000100" and statuses[-1].params["status"] == ""
    assert slack.pipeline.asked[0].text == "How do I deploy?"
    assert slack.pipeline.asked[0].event_key == "slack:T1:C1:1000.000100"
    scope = slack.pipeline.asked[0].scope
    assert scope.datasets == ("docs",) and scope.retrieval_mode == "multi"


async def test_chinese_questions_get_chinese_phases_and_summary_line(slack: SlackHarness) -> None:
    """A Chinese question sees Chinese progress texts and the documented "已压缩 3 轮, 保留近期 1 轮原文" line."""
    slack.pipeline.script(
        "行政复议的期限是多久?",
        answer="六十日内提出 [1]。",
        step_delay=0.12,
        rounds=[("复议 期限", False, "预算金额"), ("预算", False, "预算金额")],
        stop_reason=StopReason.NO_NEW_EVIDENCE,
        compacted_rounds=3,
        recent_rounds=1,
    )
    await slack.event(slack.mention("行政复议的期限是多久?", ts="1000.000200"))
    await slack.bot.wait_idle(5)
    [reply] = slack.mock.thread("C1", "1000.000200")
    seen = progress_seen(reply)
    assert "第 1 轮检索:复议 期限" in seen
    assert "检索 2 轮 · 未发现新增资料 · 上下文: 已压缩 3 轮, 保留近期 1 轮原文" in reply.block_text()
    assert "查看检索轨迹" in reply.block_text()


async def test_the_uncertainty_notice_is_a_visible_block_shown_once(slack: SlackHarness) -> None:
    """The notice that ends the answer text is rendered as its own ⚠️ block and not repeated in the body."""
    slack.pipeline.script(
        "budget?", answer="The deadline is 60 days [1].", notice="The budget amount could not be verified."
    )
    await slack.event(slack.mention("budget?", ts="1000.000300"))
    await slack.bot.wait_idle(5)
    [reply] = slack.mock.thread("C1", "1000.000300")
    sections = [b["text"]["text"] for b in reply.blocks if b["type"] == "section"]
    assert "The deadline is 60 days [1]." in reply.block_text()
    assert "⚠️ The budget amount could not be verified." in sections
    assert reply.block_text().count("could not be verified") == 1


async def test_a_long_answer_is_split_into_sections_and_continued_in_further_replies(
    slack: SlackHarness,
) -> None:
    """A 40k-character answer becomes several thread messages within Slack's limits, in order, sources last."""
    paragraphs = [f"Paragraph {i}: " + ("lorem ipsum dolor sit amet " * 40).strip() for i in range(150)]
    slack.pipeline.script("long?", answer="\n\n".join(paragraphs))
    await slack.event(slack.mention("long?", ts="1000.000400"))
    await slack.bot.wait_idle(10)
    replies = slack.mock.thread("C1", "1000.000400")
    assert len(replies) >= 3
    text = "\n".join(m.block_text() for m in replies)
    positions = [text.index(f"Paragraph {i}:") for i in range(150)]
    assert positions == sorted(positions)
    assert all(len(m.blocks) <= 50 for m in replies)
    assert "Sources" in replies[-1].block_text() and "Sources" not in replies[0].block_text()
    assert [b["type"] for b in replies[-1].blocks[-2:]] == ["actions", "context_actions"]


async def test_a_second_question_in_a_busy_thread_is_queued_and_answered_after_the_first(
    slack: SlackHarness,
) -> None:
    """The second question gets its own "queued" placeholder and its answer comes after the first one's."""
    gate = asyncio.Event()
    slack.pipeline.script("first?", answer="First answer.", gate=gate)
    slack.pipeline.script("second?", answer="Second answer.")
    await slack.event(slack.mention("first?", ts="1000.000500"))
    await slack.mock.wait_for(lambda: len(slack.mock.thread("C1", "1000.000500")) == 1)
    await slack.event(slack.message("second?", ts="1000.000600", thread_ts="1000.000500"))
    await slack.mock.wait_for(lambda: len(slack.mock.thread("C1", "1000.000500")) == 2)
    await asyncio.sleep(0.2)
    first, second = slack.mock.thread("C1", "1000.000500")
    seen = progress_seen(second)
    assert "1 question(s) ahead in this thread" in seen or "Waiting for 1 earlier question(s)" in seen
    assert "Second answer" not in second.block_text()
    gate.set()
    await slack.bot.wait_idle(5)
    assert slack.pipeline.answered_order == ["first?", "second?"]
    assert "First answer." in first.block_text() and "Second answer." in second.block_text()


async def test_ten_threads_asking_at_once_each_get_exactly_their_own_answer(slack: SlackHarness) -> None:
    """Ten simultaneous mentions in ten threads produce ten placeholders, each edited into its own answer."""
    for i in range(10):
        slack.pipeline.script(f"question {i}?", answer=f"Answer number {i}.", step_delay=0.05)
    statuses = await asyncio.gather(
        *(slack.event(slack.mention(f"question {i}?", ts=f"2000.{i:06d}")) for i in range(10))
    )
    assert statuses == [200] * 10
    await slack.bot.wait_idle(10)
    for i in range(10):
        [reply] = slack.mock.thread("C1", f"2000.{i:06d}")
        assert f"Answer number {i}." in reply.block_text()


async def test_a_failure_edits_the_placeholder_into_a_message_in_the_users_language(
    slack: SlackHarness,
) -> None:
    """A failure shows the pipeline's message in the asker's language in place of the placeholder, and is
    stored on the record; nothing looks like an answer."""
    slack.pipeline.script("请解释一下", fail=("model_unavailable", "模型服务暂时不可用,请稍后再试。"))
    slack.pipeline.script(
        "explain",
        fail=("model_unavailable", "The model service is unavailable right now; please try again later."),
    )
    await slack.event(slack.mention("请解释一下", ts="1000.000700"))
    await slack.event(slack.mention("explain", ts="1000.000800"))
    await slack.bot.wait_idle(5)
    [zh] = slack.mock.thread("C1", "1000.000700")
    [en] = slack.mock.thread("C1", "1000.000800")
    assert zh.block_text() == "⚠️ 模型服务暂时不可用,请稍后再试。"
    assert en.block_text() == "⚠️ The model service is unavailable right now; please try again later."
    records = list(slack.pipeline.store.records.values())
    assert {r.status for r in records} == {RecordStatus.FAILED}


async def test_a_channel_without_datasets_says_no_knowledge_base_is_configured(slack: SlackHarness) -> None:
    """A mention in a channel with no datasets gets a clear reply and never reaches the pipeline."""
    await slack.event(slack.mention("anything?", ts="1000.000900", channel="CNONE"))
    await slack.bot.wait_idle(5)
    [reply] = slack.mock.thread("CNONE", "1000.000900")
    assert "No knowledge base is configured here" in reply.block_text()
    assert slack.pipeline.asked == []


async def test_a_rate_limited_update_is_retried_after_retry_after_and_the_answer_lands(
    slack: SlackHarness,
) -> None:
    """The final call (chat.update, or chat.stopStream) answering 429 with Retry-After is retried after it
    and then succeeds."""
    final_call = "chat.stopStream" if slack.options.streaming != "edit" else "chat.update"
    slack.mock.throttle(final_call, times=1, retry_after=1)
    slack.pipeline.script("limited?", answer="Still delivered.")
    await slack.event(slack.mention("limited?", ts="1000.001000"))
    await slack.bot.wait_idle(10)
    [reply] = slack.mock.thread("C1", "1000.001000")
    assert "Still delivered." in reply.block_text()
    assert slack.mock.rate_limited[final_call] == 1


async def test_a_pipeline_crash_ends_in_an_error_message_not_a_stuck_placeholder(slack: SlackHarness) -> None:
    """If the pipeline raises, the placeholder is edited into a generic error instead of staying in progress."""

    async def broken(question: Ask) -> AsyncIterator[Progress]:
        yield Accepted(await stored_question(slack.pipeline.store, question.conversation, question.text))
        yield ContextLoading()
        raise RuntimeError("boom")

    slack.pipeline.ask = broken
    await slack.event(slack.mention("crash?", ts="1000.001100"))
    await slack.bot.wait_idle(5)
    [reply] = slack.mock.thread("C1", "1000.001100")
    assert reply.block_text() == "⚠️ Something went wrong while answering; please try again later."
