"""After a kill or a shutdown: the reply a crash left unrecorded is found again, and an interrupted question is
answered after the restart (once, in its reply) unless KB_RESUME_INTERRUPTED=false."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

from adapters.slack.delivery.ledger import Delivery, DeliveryState
from core.commands import AskAgain
from core.models import ConversationKey, RecordStatus
from core.record import Record
from tests.fakes import InMemoryConversationStore
from tests.slack.fake_pipeline import FakePipeline
from tests.slack.harness import FAST, FAST_DELIVERY, NATIVE, NOTICE, SlackHarness
from tests.slack.mock_slack_api import MockSlackApi
from tests.slack.mock_slack_methods import PostedMessage
from tests.stored import stored_question

INTERRUPTED_NOTICE = "⚠️ This answer was interrupted (the bot stopped or restarted). Please ask again."


async def kill(slack: SlackHarness) -> None:
    """Like kill -9: the pipeline writes nothing more, the bot's tasks die where they are (a call on the
    wire gets no answer), nothing is shut down or corrected."""
    slack.pipeline.killed = True
    await slack.bot.stop_maintenance()
    for task in list(slack.bot._tasks):
        task.cancel()
    await asyncio.gather(*slack.bot._tasks, return_exceptions=True)
    slack.bot.answerer.cancel_background()
    await slack.close(shutdown=False)


async def ask_and_hang(slack: SlackHarness, ts: str, *, question: str = "slow?") -> asyncio.Event:
    """Ask a question whose answer hangs (the gate stays shut)."""
    gate = asyncio.Event()
    slack.pipeline.script(question, gate=gate)
    await slack.event(slack.mention(question, ts=ts))
    return gate


async def restart(
    mock: MockSlackApi, store: InMemoryConversationStore, *, answer: str, **options: Any
) -> SlackHarness:
    """A new process on the same store and workspace, its answers scripted; returns it started."""
    harness = SlackHarness(pipeline=FakePipeline(store), mock=mock, options=replace(FAST, **options))
    harness.pipeline.script("slow?", answer=answer)
    return await harness.start()


def only_record(slack: SlackHarness) -> Record:
    """The one record in the store."""
    [record] = slack.pipeline.store.records.values()
    return record


def only_reply(mock: MockSlackApi, thread_ts: str) -> PostedMessage:
    """The bot's one live message in the thread."""
    [reply] = mock.thread("C1", thread_ts)
    return reply


async def test_a_stream_whose_start_got_no_answer_is_found_and_becomes_the_answer() -> None:
    """chat.startStream reaches Slack but its answer never comes back (the bot is killed in that window):
    the ledger noted the start, so the restarted bot finds the open stream in the thread by its author,
    stops it and answers in it; the thread ends with one reply, final, and there is one record."""
    mock = await MockSlackApi().start()
    first = await SlackHarness(mock=mock, options=NATIVE).start()
    mock.hold("chat.startStream")
    await ask_and_hang(first, "2100.000100")
    await mock.wait_for(lambda: bool(mock.held))
    lost = only_reply(mock, "2100.000100")
    assert lost.streaming and lost.metadata is None  # a stream start carries no metadata
    record = only_record(first)
    delivery = first.delivery_of(record)
    assert delivery is not None and delivery.reply_unknown and delivery.starting_at <= time.time()
    await kill(first)

    second = await restart(mock, first.store, answer="Answered after the restart.", streaming="auto")
    await second.bot.wait_idle(5)
    await second.close()
    shown = only_reply(mock, "2100.000100")
    assert shown.ts == lost.ts and not shown.streaming
    assert "Answered after the restart." in shown.block_text() and "⏳" not in shown.block_text()
    assert [call.params["ts"] for call in mock.calls_to("chat.stopStream")] == [lost.ts]
    assert shown.metadata == {"event_type": "kb_answer", "event_payload": {"record_id": record.id, "part": 0}}
    assert len(mock.calls_to("chat.startStream")) == 1  # the lost one: the answer went into it
    final = only_record(first)
    assert final.status == RecordStatus.ANSWERED
    delivered = first.delivery_of(final)
    assert delivered is not None and delivered.state == DeliveryState.DELIVERED
    assert delivered.reply_ref == f"C1:{lost.ts}" and delivered.starting_at == 0.0
    await mock.close()
    assert mock.violations == []


async def test_a_placeholder_post_that_got_no_answer_is_found_by_its_metadata() -> None:
    """Edit-in-place with KB_RESUME_INTERRUPTED=false: the placeholder's chat.postMessage got no answer
    before the kill; the restart finds it by the record's metadata and turns it into the notice (one
    reply, no second post)."""
    mock = await MockSlackApi().start()
    first = await SlackHarness(mock=mock, options=NOTICE).start()
    mock.hold("chat.postMessage")
    await ask_and_hang(first, "2100.000200")
    await mock.wait_for(lambda: bool(mock.held))
    lost = only_reply(mock, "2100.000200")
    record = only_record(first)
    assert lost.metadata == {"event_type": "kb_answer", "event_payload": {"record_id": record.id, "part": 0}}
    await kill(first)

    second = await restart(mock, first.store, answer="unused", resume_interrupted=False)
    await second.bot.wait_idle(5)
    await second.close()
    shown = only_reply(mock, "2100.000200")
    assert shown.ts == lost.ts and shown.block_text() == INTERRUPTED_NOTICE
    assert len(mock.calls_to("chat.postMessage")) == 1 and mock.calls_to("chat.stopStream") == []
    delivery = first.delivery_of(record)
    assert delivery is not None and delivery.state == DeliveryState.DELIVERED
    await mock.close()
    assert mock.violations == []


async def test_an_answered_record_whose_stream_start_got_no_answer_is_delivered_in_that_stream() -> None:
    """The answer was stored but its stream's start never answered before the kill: once the dead
    instance's lease runs out, the re-deliverer finds the open stream and puts the final answer there."""
    mock = await MockSlackApi().start()
    quick = replace(NATIVE, delivery=replace(FAST_DELIVERY, lease=0.5))
    first = await SlackHarness(mock=mock, options=quick).start()
    mock.hold("chat.startStream")
    first.pipeline.script("quick?", answer="Stored before the kill.")
    await first.event(first.mention("quick?", ts="2100.000300"))
    await mock.wait_for(lambda: bool(mock.held))
    await first.mock.wait_for(lambda: only_record(first).status == RecordStatus.ANSWERED)
    lost = only_reply(mock, "2100.000300")
    await kill(first)

    second = await SlackHarness(pipeline=FakePipeline(first.store), mock=mock, options=quick).start()
    await mock.wait_for(lambda: not only_reply(mock, "2100.000300").streaming, within=10)
    await mock.wait_for(lambda: "Stored before the kill." in only_reply(mock, "2100.000300").block_text())
    await second.bot.wait_idle(5)
    await second.close()
    shown = only_reply(mock, "2100.000300")
    assert shown.ts == lost.ts and "Sources" in shown.block_text()
    delivery = first.delivery_of(only_record(first))
    assert delivery is not None and delivery.state == DeliveryState.DELIVERED
    assert second.pipeline.asked == []  # delivered, not answered again
    await mock.close()
    assert mock.violations == []


async def test_a_noted_start_that_never_reached_slack_gets_a_new_reply() -> None:
    """A start noted in the ledger whose message is nowhere in the thread: the restart looks, finds
    nothing, and answers with one new reply."""
    mock = await MockSlackApi().start()
    store = FakePipeline().store
    key = ConversationKey("slack", "T1", "C1", "2100.000400")
    record = await stored_question(
        store,
        key,
        "slow?",
        event_key="slack:T1:C1:2100.000400",
        reply_to="C1:2100.000400",
        asked_by="slack:T1:U1",
    )
    store.deliveries[record.id] = Delivery(due=record.created_at, starting_at=time.time() - 1)
    restarted = await restart(mock, store, answer="A fresh reply.")
    await restarted.bot.wait_idle(5)
    await restarted.close()
    assert len(mock.calls_to("conversations.replies")) == 1
    shown = only_reply(mock, "2100.000400")
    assert "A fresh reply." in shown.block_text()
    assert store.records[record.id].status == RecordStatus.ANSWERED
    await mock.close()
    assert mock.violations == []


async def test_with_default_settings_a_question_killed_mid_answer_is_answered_after_the_restart() -> None:
    """Default settings: the bot dies mid-answer, the next start answers the question again in the same
    message (no "please ask again", no second message)."""
    mock = await MockSlackApi().start()
    first = await SlackHarness(mock=mock).start()
    await ask_and_hang(first, "2100.000500")
    await mock.wait_for(lambda: bool(first.reply_ref_of(only_record(first))))
    placeholder = only_reply(mock, "2100.000500")
    assert "⏳" in placeholder.block_text()
    await kill(first)

    second = SlackHarness(pipeline=FakePipeline(first.store), mock=mock)
    second.pipeline.script("slow?", answer="Answered after the restart.")
    await second.start()
    await second.bot.wait_idle(5)
    await second.close()
    shown = only_reply(mock, "2100.000500")
    assert shown.ts == placeholder.ts
    assert (
        "Answered after the restart." in shown.block_text() and "Please ask again" not in shown.block_text()
    )
    record = only_record(first)
    assert record.status == RecordStatus.ANSWERED
    assert [type(command) for command in second.pipeline.asked] == [AskAgain]
    delivery = first.delivery_of(record)
    assert delivery is not None and delivery.state == DeliveryState.DELIVERED and delivery.resumes == 1
    await mock.close()
    assert mock.violations == []


async def test_a_question_interrupted_again_after_its_resume_gets_the_notice() -> None:
    """Answered again once: killed a second time mid-answer, the question gets "please ask again" in its
    reply on the next start, and is not asked a third time."""
    mock = await MockSlackApi().start()
    first = await SlackHarness(mock=mock).start()
    await ask_and_hang(first, "2100.000600")
    await mock.wait_for(lambda: bool(first.reply_ref_of(only_record(first))))
    placeholder = only_reply(mock, "2100.000600")
    await kill(first)

    second = SlackHarness(pipeline=FakePipeline(first.store), mock=mock)
    gate = asyncio.Event()
    second.pipeline.script("slow?", gate=gate)  # the resumed answer hangs too
    await second.start()
    await mock.wait_for(lambda: bool(second.pipeline.asked) and second.bot.answerer.in_flight != {})
    assert only_record(first).status == RecordStatus.PENDING
    await kill(second)

    third = await SlackHarness(pipeline=FakePipeline(first.store), mock=mock).start()
    await third.bot.wait_idle(5)
    await third.close()
    shown = only_reply(mock, "2100.000600")
    assert shown.ts == placeholder.ts and shown.block_text() == INTERRUPTED_NOTICE
    assert third.pipeline.asked == []
    record = only_record(first)
    assert record.status == RecordStatus.INTERRUPTED
    delivery = first.delivery_of(record)
    assert delivery is not None and delivery.resumes == 1 and delivery.state == DeliveryState.DELIVERED
    await mock.close()
    assert mock.violations == []


async def test_with_default_settings_shutdown_leaves_the_answer_to_the_next_start() -> None:
    """Default settings: an answer cut short by shutdown keeps its reply (no "please ask again"); the next
    start's re-deliverer answers it in that reply."""
    mock = await MockSlackApi().start()
    first = await SlackHarness(mock=mock).start()
    await ask_and_hang(first, "2100.000700")
    await mock.wait_for(lambda: bool(first.reply_ref_of(only_record(first))))
    assert await first.bot.shutdown(grace=0.1) == 1
    await first.close(shutdown=False)
    placeholder = only_reply(mock, "2100.000700")
    assert "⏳" in placeholder.block_text() and "interrupted" not in placeholder.block_text()
    assert only_record(first).status == RecordStatus.INTERRUPTED
    delivery = first.delivery_of(only_record(first))
    assert (
        delivery is not None and delivery.state == DeliveryState.PLACEHOLDER and delivery.due <= time.time()
    )

    second = await restart(mock, first.store, answer="Answered after the restart.")
    await mock.wait_for(lambda: "Answered after" in only_reply(mock, "2100.000700").block_text(), within=10)
    await second.bot.wait_idle(5)
    await second.close()
    shown = only_reply(mock, "2100.000700")
    assert shown.ts == placeholder.ts and "⏳" not in shown.block_text()
    assert only_record(first).status == RecordStatus.ANSWERED
    await mock.close()
    assert mock.violations == []


async def test_with_default_settings_a_retry_of_a_question_never_shown_answers_it() -> None:
    """A question interrupted before anything was posted (its instance died) is answered when Slack
    retries it, in one reply."""
    async with SlackHarness.running() as slack:
        store = slack.pipeline.store
        record = await stored_question(
            store,
            ConversationKey("slack", "T1", "C1", "2100.000800"),
            "lost?",
            event_key="slack:T1:C1:2100.000800",
            reply_to="C1:2100.000800",
            asked_by="slack:T1:U1",
        )
        await store.fail_record(record.id, status=RecordStatus.INTERRUPTED, reason="swept")
        slack.pipeline.script("lost?", answer="Found it.")
        assert await slack.event(slack.mention("lost?", ts="2100.000800"), retry_num=1) == 200
        await slack.bot.wait_idle(5)
        shown = only_reply(slack.mock, "2100.000800")
        assert "Found it." in shown.block_text()
        assert store.records[record.id].status == RecordStatus.ANSWERED
        assert [type(command) for command in slack.pipeline.asked] == [AskAgain]
