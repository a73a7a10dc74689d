"""Process lifetime: answers a crash left pending are recovered on start; shutdown finishes or interrupts."""

from __future__ import annotations

import asyncio
from dataclasses import replace

from adapters.slack.delivery.ledger import DeliveryState
from core.models import ConversationKey, RecordStatus
from tests.slack.fake_pipeline import FakePipeline
from tests.slack.harness import FAST, NOTICE, SlackHarness
from tests.stored import stored_question


async def _start_hanging_answer(slack: SlackHarness, ts: str) -> asyncio.Event:
    gate = asyncio.Event()
    slack.pipeline.script("slow?", gate=gate)
    await slack.event(slack.mention("slow?", ts=ts))
    await slack.mock.wait_for(  # answering, with its placeholder out
        lambda: any(
            r.status == RecordStatus.PENDING and slack.reply_ref_of(r)
            for r in slack.pipeline.store.records.values()
        )
    )
    return gate


async def test_an_answer_left_pending_by_a_crash_is_marked_interrupted_on_the_next_start(
    slack: SlackHarness,
) -> None:
    """With KB_RESUME_INTERRUPTED=false: after a crash mid-answer, the next start marks the record
    interrupted and edits its placeholder to say so."""
    await _start_hanging_answer(slack, "1300.000100")
    slack.pipeline.killed = True
    for task in list(slack.bot._tasks):  # the process dies: no shutdown, nothing marked
        task.cancel()
    await asyncio.gather(*slack.bot._tasks, return_exceptions=True)
    [record] = slack.pipeline.store.records.values()
    assert record.status == RecordStatus.PENDING
    restarted = await SlackHarness(
        pipeline=FakePipeline(slack.pipeline.store), mock=slack.mock, options=NOTICE
    ).start()
    await restarted.close()
    [placeholder] = slack.mock.thread("C1", "1300.000100")
    assert (
        placeholder.block_text()
        == "⚠️ This answer was interrupted (the bot stopped or restarted). Please ask again."
    )
    assert slack.pipeline.store.records[record.id].status == RecordStatus.INTERRUPTED
    assert slack.reply_ref_of(record) == f"C1:{placeholder.ts}"


async def test_shutdown_interrupts_answers_that_outlive_the_grace_period() -> None:
    """With KB_RESUME_INTERRUPTED=false: an answer still running when the grace period ends is marked
    interrupted and its placeholder says so."""
    async with SlackHarness.running(options=NOTICE) as slack:
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


async def test_a_retry_of_an_interrupted_question_whose_notice_never_showed_gets_it() -> None:
    """With KB_RESUME_INTERRUPTED=false: a question interrupted before anything was posted (its instance
    died) is not met with silence when Slack retries it: the retry shows the "interrupted, please ask
    again" message, once."""
    async with SlackHarness.running(options=NOTICE) as slack:
        store = slack.pipeline.store
        event = slack.mention("lost?", ts="1300.000500")
        record = await stored_question(
            store,
            ConversationKey("slack", "T1", "C1", "1300.000500"),
            "lost?",
            event_key="slack:T1:C1:1300.000500",
            reply_to="C1:1300.000500",
        )
        await store.fail_record(record.id, status=RecordStatus.INTERRUPTED, reason="swept")
        assert await slack.event(event, retry_num=1) == 200
        await slack.bot.wait_idle(5)
        [shown] = slack.mock.thread("C1", "1300.000500")
        assert (
            shown.block_text()
            == "⚠️ This answer was interrupted (the bot stopped or restarted). Please ask again."
        )
        delivery = slack.delivery_of(record)
        assert delivery is not None and delivery.state == DeliveryState.DELIVERED
        assert await slack.event(event, retry_num=2) == 200
        await slack.bot.wait_idle(5)
        assert len(slack.mock.thread("C1", "1300.000500")) == 1 and slack.pipeline.asked == []


async def test_with_resume_a_restart_answers_the_interrupted_question_in_its_placeholder(
    slack: SlackHarness,
) -> None:
    """KB_RESUME_INTERRUPTED: after a crash mid-answer, the next start answers the question again and the
    old placeholder becomes the answer (no second message, no "please ask again")."""
    gate = await _start_hanging_answer(slack, "1300.000600")
    slack.pipeline.killed = True
    for task in list(slack.bot._tasks):  # the process dies mid-answer
        task.cancel()
    await asyncio.gather(*slack.bot._tasks, return_exceptions=True)
    gate.set()
    restarted = SlackHarness(
        pipeline=FakePipeline(slack.pipeline.store),
        mock=slack.mock,
        options=replace(FAST, resume_interrupted=True),
    )
    restarted.pipeline.script("slow?", answer="Answered after the restart.")
    await restarted.start()
    await restarted.bot.wait_idle(5)
    await restarted.close()
    [shown] = slack.mock.thread("C1", "1300.000600")
    assert "Answered after the restart." in shown.block_text() and "⏳" not in shown.block_text()
    [record] = slack.pipeline.store.records.values()
    assert record.status == RecordStatus.ANSWERED
    assert (
        slack.delivery_of(record) is not None and slack.delivery_of(record).state == DeliveryState.DELIVERED
    )
    assert record.details.previous_answers[0].status == "interrupted"
