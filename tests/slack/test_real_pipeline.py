"""The main Slack scenarios against core's real Pipeline (fake engine and knowledge base behind it)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import pytest

from adapters.extractive.engine import ExtractiveEngine
from core.models import RecordStatus
from tests.slack.harness import NOTICE, SlackHarness
from tests.slack.real_pipeline import RealPipeline, build_real_pipeline


@pytest.fixture
async def real() -> AsyncIterator[tuple[SlackHarness, RealPipeline]]:
    """A running bot whose pipeline is core.pipeline.Pipeline."""
    parts = build_real_pipeline()
    async with SlackHarness.running(pipeline=parts.pipeline, store=parts.store) as harness:
        yield harness, parts


async def test_a_question_is_answered_in_place_with_sources_and_a_trace_summary(
    real: tuple[SlackHarness, RealPipeline],
) -> None:
    """Placeholder, phase edits, then the real pipeline's answer with numbered sources and the summary line."""
    slack, parts = real
    parts.engine.answers.append(["Use ", "**make deploy** ", "[1]."])
    await slack.event(slack.mention("How do deploys run?", ts="1400.000100"))
    await slack.bot.wait_idle(10)
    [reply] = slack.mock.thread("C1", "1400.000100")
    assert "⏳" in json.dumps(reply.versions[0]["blocks"], ensure_ascii=False)  # a placeholder came first
    final = reply.block_text()
    assert "Use *make deploy* [1]." in final and "[1] Ops guide › Deploying" in final
    assert "Retrieval: 1 round" in final
    [record] = parts.store.records.values()
    assert record.status == RecordStatus.ANSWERED and slack.reply_ref_of(record) == f"C1:{reply.ts}"
    assert record.event_key == "slack:T1:C1:1400.000100"


async def test_a_follow_up_without_mention_continues_the_same_conversation(
    real: tuple[SlackHarness, RealPipeline],
) -> None:
    """The plain reply in the thread is answered with the first turn as history (it is rewritten)."""
    slack, parts = real
    await slack.event(slack.mention("How do deploys run?", ts="1400.000200"))
    await slack.bot.wait_idle(10)
    await slack.event(slack.message("and rollbacks?", ts="1400.000300", thread_ts="1400.000200"))
    await slack.bot.wait_idle(10)
    assert len(slack.mock.thread("C1", "1400.000200")) == 2
    [(history, question)] = parts.engine.calls("rewrite")
    assert question == "and rollbacks?" and history[0].question == "How do deploys run?"


async def test_two_questions_in_one_thread_are_answered_in_order(
    real: tuple[SlackHarness, RealPipeline],
) -> None:
    """The second question waits on the conversation lock with a queued placeholder, then is answered."""
    slack, parts = real
    parts.engine.answer_delay = 0.05
    parts.engine.answers.extend([["first ", "answer ", "[1]"], ["second ", "answer ", "[1]"]])
    await slack.event(slack.mention("How do deploys run?", ts="1400.000400"))
    await slack.event(slack.message("and rollbacks?", ts="1400.000500", thread_ts="1400.000400"))
    await slack.bot.wait_idle(10)
    first, second = slack.mock.thread("C1", "1400.000400")
    assert "first answer" in first.block_text() and "second answer" in second.block_text()
    assert "ahead in this thread" in json.dumps(second.versions[0]["blocks"])
    records = sorted(parts.store.records.values(), key=lambda r: r.id)
    assert [r.question for r in records] == ["How do deploys run?", "and rollbacks?"]


async def test_a_too_long_question_fails_with_its_size_in_the_users_language(
    real: tuple[SlackHarness, RealPipeline],
) -> None:
    """The real validation rejects a 5000-token Chinese question; the placeholder says so in Chinese."""
    slack, parts = real
    await slack.event(slack.mention("预算" * 5000, ts="1400.000600"))
    await slack.bot.wait_idle(10)
    [reply] = slack.mock.thread("C1", "1400.000600")
    assert reply.block_text().startswith("⚠️ 问题太长") and "4000" in reply.block_text()
    assert not any(r.status == RecordStatus.ANSWERED for r in parts.store.records.values())


async def test_a_crash_left_pending_is_recovered_by_the_real_pipeline(
    real: tuple[SlackHarness, RealPipeline],
) -> None:
    """With KB_RESUME_INTERRUPTED=false: a record left pending is marked interrupted on the next start and
    its placeholder edited."""
    slack, parts = real
    gate = asyncio.Event()
    original = parts.engine.answer

    async def slow(request):  # type: ignore[no-untyped-def]
        await gate.wait()
        async for item in original(request):
            yield item

    parts.engine.answer = slow  # type: ignore[method-assign]
    await slack.event(slack.mention("How do deploys run?", ts="1400.000700"))
    await slack.mock.wait_for(
        lambda: any(r.status == RecordStatus.PENDING for r in parts.store.records.values())
    )
    await asyncio.sleep(0.1)
    restarted_parts = build_real_pipeline(parts.store)
    restarted = await SlackHarness(
        pipeline=restarted_parts.pipeline, store=restarted_parts.store, mock=slack.mock, options=NOTICE
    ).start()
    await restarted.close()
    [reply] = slack.mock.thread("C1", "1400.000700")
    assert "interrupted" in reply.block_text()
    assert {r.status for r in parts.store.records.values()} == {RecordStatus.INTERRUPTED}
    gate.set()


async def test_the_compact_shortcut_reports_the_real_compaction_result(
    real: tuple[SlackHarness, RealPipeline],
) -> None:
    """Manual compaction of a short thread reports that it is under budget."""
    slack, _ = real
    await slack.event(slack.mention("How do deploys run?", ts="1400.000800"))
    await slack.bot.wait_idle(10)
    await slack.shortcut(
        "compact_thread", channel="C1", message={"ts": "1400.000800", "text": "x", "user": "U1"}
    )
    await slack.mock.wait_for(lambda: len(slack.mock.ephemerals) == 1)
    assert "Nothing to compact: the context is under budget" in slack.mock.ephemerals[0]["text"]


async def test_the_trace_modal_renders_a_real_record(real: tuple[SlackHarness, RealPipeline]) -> None:
    """The "Show retrieval trace" shortcut renders the real pipeline's trace within Block Kit limits."""
    slack, _ = real
    await slack.event(slack.mention("行政复议的申请期限是多久?", ts="1400.000900"))
    await slack.bot.wait_idle(10)
    await slack.shortcut("show_trace", channel="C1", message={"ts": "1400.000900", "text": "x", "user": "U1"})
    await slack.mock.wait_for(lambda: len(slack.mock.views) == 1)
    [view] = slack.mock.views.values()
    assert view["title"]["text"] == "检索轨迹"
    assert "第 1 轮" in json.dumps(view["blocks"], ensure_ascii=False)


async def test_an_answer_stating_a_figure_no_source_holds_is_marked_in_slack(
    real: tuple[SlackHarness, RealPipeline],
) -> None:
    """The final message lists "3" (no source states it) under the answer; "5 minutes" is the guide's "five
    minutes" and is not listed; the record keeps the claim."""
    slack, parts = real
    parts.engine.answers.append(["Rollbacks take 5 minutes [1]. ", "They need 3 approvals [1]."])
    await slack.event(slack.mention("How long do rollbacks take?", ts="1500.000100"))
    await slack.bot.wait_idle(10)
    [reply] = slack.mock.thread("C1", "1500.000100")
    final = reply.block_text()
    assert "Rollbacks take 5 minutes" in final
    assert "⚠ Not found in the sources: “3” (check before relying on it)" in final
    [record] = parts.store.records.values()
    assert [(claim.text, claim.kind) for claim in record.details.unsupported] == [("3", "number")]


async def test_a_part_the_model_left_out_is_quoted_under_its_answer_in_slack() -> None:
    """The model answers how to deploy and leaves out the rollback part: the final message quotes the
    rollback paragraph under a line naming that part, with its marker, and the record keeps the quote."""
    parts = build_real_pipeline(left_out=ExtractiveEngine())
    parts.engine.answers.append(["Deploys run with make deploy [1]."])
    async with SlackHarness.running(pipeline=parts.pipeline, store=parts.store) as slack:
        question = "How do deploys run? How long do rollbacks take?"
        await slack.event(slack.mention(question, ts="1600.000100"))
        await slack.bot.wait_idle(10)
        [reply] = slack.mock.thread("C1", "1600.000100")
        final = reply.block_text()
    assert 'The answer above leaves out "How long do rollbacks take"; the sources say:' in final
    assert "Rollbacks use make rollback and take five minutes." in final.split("leaves out", 1)[1]
    [record] = parts.store.records.values()
    assert {quote.part for quote in record.details.supplied} == {"How long do rollbacks take"}
