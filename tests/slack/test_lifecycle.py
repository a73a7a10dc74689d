"""Process lifetime: answers a crash left pending are recovered on start; shutdown finishes or interrupts."""

from __future__ import annotations

import asyncio

from core.models import RecordStatus
from tests.slack.fake_pipeline import FakePipeline
from tests.slack.harness import SlackHarness


async def _start_hanging_answer(slack: SlackHarness, ts: str) -> asyncio.Event:
    gate = asyncio.Event()
    slack.pipeline.script("slow?", gate=gate)
    await slack.event(slack.mention("slow?", ts=ts))
    await slack.mock.wait_for(  # answering, with its placeholder out
        lambda: any(
            r.status == RecordStatus.PENDING and r.reply_ref for r in slack.pipeline.store.records.values()
        )
    )
    return gate


async def test_an_answer_left_pending_by_a_crash_is_marked_interrupted_on_the_next_start(
    slack: SlackHarness,
) -> None:
    """After a crash mid-answer, the next start marks the record interrupted and edits its placeholder."""
    await _start_hanging_answer(slack, "1300.000100")
    for task in list(slack.bot._tasks):  # the process dies: no shutdown, nothing marked
        task.cancel()
    await asyncio.gather(*slack.bot._tasks, return_exceptions=True)
    [record] = slack.pipeline.store.records.values()
    assert record.status == RecordStatus.PENDING
    restarted = await SlackHarness(pipeline=FakePipeline(slack.pipeline.store), mock=slack.mock).start()
    await restarted.close()
    [placeholder] = slack.mock.thread("C1", "1300.000100")
    assert (
        placeholder.block_text()
        == "⚠️ This answer was interrupted (the bot stopped or restarted). Please ask again."
    )
    assert slack.pipeline.store.records[record.id].status == RecordStatus.INTERRUPTED
    assert record.reply_ref == f"C1:{placeholder.ts}"


async def test_shutdown_interrupts_answers_that_outlive_the_grace_period(slack: SlackHarness) -> None:
    """An answer still running when the grace period ends is marked interrupted and its placeholder says so."""
    await _start_hanging_answer(slack, "1300.000200")
    assert await slack.bot.shutdown(grace=0.2) == 1
    [placeholder] = slack.mock.thread("C1", "1300.000200")
    assert "interrupted" in placeholder.block_text() and "⏳" not in placeholder.block_text()
    assert {r.status for r in slack.pipeline.store.records.values()} == {RecordStatus.INTERRUPTED}


async def test_shutdown_lets_an_answer_finish_within_the_grace_period(slack: SlackHarness) -> None:
    """An answer that completes during the grace period is delivered normally, nothing is interrupted."""
    gate = await _start_hanging_answer(slack, "1300.000300")
    asyncio.get_running_loop().call_later(0.2, gate.set)
    assert await slack.bot.shutdown(grace=5.0) == 0
    [reply] = slack.mock.thread("C1", "1300.000300")
    assert "The answer is in the guide" in reply.block_text()
    assert {r.status for r in slack.pipeline.store.records.values()} == {RecordStatus.ANSWERED}


async def test_events_arriving_during_shutdown_are_left_for_slack_to_redeliver(slack: SlackHarness) -> None:
    """Once shutdown began, a new event gets 503 (so Slack retries it later) and is not started."""
    slack.bot.closing = True
    assert await slack.event(slack.mention("late?", ts="1300.000400")) == 503
    await slack.bot.wait_idle(2)
    assert slack.pipeline.asked == []
