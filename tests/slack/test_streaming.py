"""Native streaming through the real AsyncApp and AsyncWebClient against the mock Slack API: a task for every
phase, safe Markdown text, the footer as closing blocks, and every way the stream falls back."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from adapters.slack.delivery.ledger import DeliveryState
from adapters.slack.rendering.safe_markdown import ZERO_WIDTH_SPACE
from core.commands import Ask
from core.events import Accepted, AnswerDelta, ContextLoading, Done, Generating, Progress
from core.models import RecordStatus
from core.record import CitedSource, Record, RecordDetails
from tests.slack.harness import FAST_DELIVERY, NATIVE, SlackHarness
from tests.slack.mock_slack_methods import PostedMessage
from tests.stored import stored_question


@pytest.fixture
async def slack() -> AsyncIterator[SlackHarness]:
    """A started bot with KB_SLACK_STREAMING=auto against a fresh mock Slack Web API."""
    async with SlackHarness.running(options=NATIVE) as harness:
        yield harness


def _record(slack: SlackHarness, index: int = 0) -> Record:
    return sorted(slack.pipeline.store.records.values(), key=lambda r: r.id)[index]


def _statuses(message: PostedMessage, task_id: str) -> list[str]:
    return [task["status"] for task in message.task_history if task["id"] == task_id]


async def test_a_streamed_answer_shows_a_task_for_every_phase_then_its_sources_and_buttons(
    slack: SlackHarness,
) -> None:
    """Context, compaction, each round (query, then what is missing) and writing are timeline tasks, shown in
    progress while they last and complete at the end; the text streams as Markdown; stopStream adds notice, sources, summary
    and the buttons; the record is delivered in that one message, with no chat.postMessage or chat.update."""
    slack.pipeline.script(
        "How do I deploy and roll back?",
        answer="Run **make deploy**, then `make rollback` [1].",
        step_delay=0.1,
        compacting=True,
        compacted_rounds=2,
        rounds=[("deploy steps", False, "the rollback steps"), ("rollback steps", True, "")],
        notice="The rollback window could not be verified.",
    )
    await slack.event(slack.mention("How do I deploy and roll back?", ts="1100.000100"))
    await slack.bot.wait_idle(5)
    [reply] = slack.mock.thread("C1", "1100.000100")
    assert reply.task_display_mode == "timeline" and reply.recipient == ("T1", "U1") and not reply.streaming
    assert list(reply.tasks) == ["context", "compacting", "round-1", "round-2", "writing"]
    assert all(_statuses(reply, task_id)[-1] == "complete" for task_id in reply.tasks)
    for slow in ("round-1", "round-2"):  # phases that last long enough are shown while they run
        assert _statuses(reply, slow)[0] == "in_progress"
    assert reply.tasks["round-1"]["title"] == "Round 1: “deploy steps”"
    assert reply.tasks["round-1"]["output"] == "Still missing: the rollback steps"
    assert reply.tasks["round-2"]["output"] == "Evidence is sufficient"
    assert reply.tasks["context"]["title"] == "Reading the conversation context"
    assert reply.tasks["writing"]["title"] == "Writing the answer from the sources"
    assert reply.streamed.strip() == "Run **make deploy**, then `make rollback` [1]."
    kinds = [block["type"] for block in reply.blocks]
    assert kinds[-2:] == ["actions", "context_actions"] and "context" in kinds
    text = reply.block_text()
    assert "⚠️ The rollback window could not be verified." in text and text.count("could not be verified") == 1
    assert "<https://docs.example.com/guide|Guide> › Setup" in text
    assert "Retrieval: 2 rounds" in text
    assert not slack.mock.calls_to("chat.postMessage") and not slack.mock.calls_to("chat.update")
    record = _record(slack)
    assert (
        slack.delivery_of(record) is not None and slack.delivery_of(record).state == DeliveryState.DELIVERED
    )
    assert slack.delivery_of(record).parts == 1 and slack.reply_ref_of(record) == f"C1:{reply.ts}"
    first_call = next(call.method for call in slack.mock.calls if call.method.startswith("chat."))
    assert first_call == "chat.startStream"


async def test_text_streams_in_pieces_while_it_is_written(slack: SlackHarness) -> None:
    """Answer text reaches Slack in several appendStream calls while the model writes, not all at the end."""

    async def slow_writer(question: Ask) -> AsyncIterator[Progress]:
        record = await stored_question(
            slack.pipeline.store,
            question.conversation,
            question.text,
            event_key=question.event_key,
            asked_by=question.asked_by,
            reply_to=question.reply_to,
        )
        yield Accepted(record)
        async with slack.pipeline.lock.hold(record.conversation_id):
            yield ContextLoading()
            yield Generating()
            words = [f"word{i} " for i in range(30)]
            for word in words:
                yield AnswerDelta(word)
                await asyncio.sleep(0.02)
            done = await slack.pipeline.store.complete_record(
                record.id, answer="".join(words).strip(), rewritten=None, details=RecordDetails(lang="en")
            )
            yield Done(done)

    slack.pipeline.ask = slow_writer
    await slack.event(slack.mention("write slowly", ts="1100.000200"))
    await slack.bot.wait_idle(5)
    [reply] = slack.mock.thread("C1", "1100.000200")
    appends = [c for c in slack.mock.calls_to("chat.appendStream") if "word" in str(c.params.get("chunks"))]
    assert len(appends) >= 3
    assert reply.streamed.split() == [f"word{i}" for i in range(30)]


async def test_streamed_text_never_pings_nor_hides_where_a_link_goes(slack: SlackHarness) -> None:
    """Slack markup from the model (<!channel>, <@U…>) is neutralised and a labelled link shows its URL."""
    slack.pipeline.script(
        "links?", answer="<!channel> see [click here](https://evil.example/login) and <@U999> [1]."
    )
    await slack.event(slack.mention("links?", ts="1100.000300"))
    await slack.bot.wait_idle(5)
    [reply] = slack.mock.thread("C1", "1100.000300")
    assert "<!channel>" not in reply.streamed and "<@U999>" not in reply.streamed
    assert f"<{ZERO_WIDTH_SPACE}!channel>" in reply.streamed
    assert "click here (https://evil.example/login)" in reply.streamed
    assert "](https://evil.example" not in reply.streamed


@pytest.mark.parametrize("code", ["unknown_method", "not_allowed", "missing_scope", "restricted_action"])
async def test_a_refused_stream_falls_back_to_editing_in_place_for_the_workspace(
    slack: SlackHarness, code: str
) -> None:
    """When chat.startStream is refused, that answer is posted and edited in place, and later answers in the
    workspace never try streaming again; both are delivered with their sources."""
    slack.mock.refuse_streaming(code)
    slack.pipeline.script("first?", answer="First answer [1].", step_delay=0.05)
    slack.pipeline.script("second?", answer="Second answer [1].")
    await slack.event(slack.mention("first?", ts="1100.000400"))
    await slack.bot.wait_idle(5)
    await slack.event(slack.mention("second?", ts="1100.000500"))
    await slack.bot.wait_idle(5)
    assert slack.bot.answerer.streaming.refused == {"T1": code}
    assert len([c for c in slack.mock.calls if c.method == "chat.startStream"]) == 1
    for ts, answer in (("1100.000400", "First answer [1]."), ("1100.000500", "Second answer [1].")):
        [reply] = slack.mock.thread("C1", ts)
        assert answer in reply.block_text() and "Sources" in reply.block_text()
        assert "⏳" not in reply.block_text()
    assert all(
        slack.delivery_of(r) and slack.delivery_of(r).state == DeliveryState.DELIVERED
        for r in slack.pipeline.store.records.values()
    )
    assert len(slack.mock.calls_to("chat.postMessage")) == 2


async def test_a_rate_limited_start_falls_back_for_that_answer_only(slack: SlackHarness) -> None:
    """A 429 on chat.startStream (Tier 2) edits that one answer in place; the next answer streams again."""
    slack.mock.throttle("chat.startStream", times=1, retry_after=1)
    await slack.event(slack.mention("limited?", ts="1100.000600"))
    await slack.bot.wait_idle(5)
    await slack.event(slack.mention("fine?", ts="1100.000700"))
    await slack.bot.wait_idle(5)
    [limited] = slack.mock.thread("C1", "1100.000600")
    [fine] = slack.mock.thread("C1", "1100.000700")
    assert not limited.task_history and "The answer is in the guide [1]." in limited.block_text()
    assert fine.task_history and "The answer is in the guide [1]." in fine.block_text()
    assert slack.bot.answerer.streaming.refused == {}


async def test_native_mode_keeps_trying_streaming_after_a_refusal(slack: SlackHarness) -> None:
    """KB_SLACK_STREAMING=native does not remember refusals: each answer tries, falls back, and is delivered."""
    slack.bot.answerer.streaming.mode = "native"
    slack.mock.refuse_streaming("not_allowed")
    await slack.event(slack.mention("one?", ts="1100.000800"))
    await slack.bot.wait_idle(5)
    await slack.event(slack.mention("two?", ts="1100.000900"))
    await slack.bot.wait_idle(5)
    assert len([c for c in slack.mock.calls if c.method == "chat.startStream"]) == 2
    assert all(
        "The answer is in the guide" in slack.mock.thread("C1", ts)[0].block_text()
        for ts in ("1100.000800", "1100.000900")
    )


async def test_an_expired_stream_is_replaced_by_the_final_answer(slack: SlackHarness) -> None:
    """When Slack closes the stream early (message_not_in_streaming_state), the outbox turns the stream
    message into the full final answer with chat.update, and the record is delivered."""
    gate = asyncio.Event()
    slack.pipeline.script("expire?", answer="Run **make deploy** [1].", gate=gate)
    await slack.event(slack.mention("expire?", ts="1100.001000"))
    await slack.mock.wait_for(lambda: bool(slack.mock.calls_to("chat.startStream")))
    slack.mock.expire_streams()
    gate.set()
    await slack.bot.wait_idle(5)
    [reply] = slack.mock.thread("C1", "1100.001000")
    assert "Run *make deploy* [1]." in reply.block_text() and "Sources" in reply.block_text()
    assert slack.mock.calls_to("chat.update")
    record = _record(slack)
    assert (
        slack.delivery_of(record) is not None and slack.delivery_of(record).state == DeliveryState.DELIVERED
    )
    assert slack.reply_ref_of(record) == f"C1:{reply.ts}"


async def test_a_final_answer_unlike_the_streamed_text_replaces_it(slack: SlackHarness) -> None:
    """If the stored answer is not what was streamed (a model that failed mid-answer and was replaced), the
    stream is ended and the message becomes the stored answer, never a mix of both."""

    async def replaced(question: Ask) -> AsyncIterator[Progress]:
        record = await stored_question(
            slack.pipeline.store,
            question.conversation,
            question.text,
            event_key=question.event_key,
            asked_by=question.asked_by,
            reply_to=question.reply_to,
        )
        yield Accepted(record)
        async with slack.pipeline.lock.hold(record.conversation_id):
            yield ContextLoading()
            yield Generating()
            yield AnswerDelta("A half-written model answer that")
            await asyncio.sleep(0.1)
            done = await slack.pipeline.store.complete_record(
                record.id,
                answer="The extractive answer instead [1].",
                rewritten=None,
                details=RecordDetails(lang="en", citations=(CitedSource(1, "Guide"),)),
            )
            yield Done(done)

    slack.pipeline.ask = replaced
    await slack.event(slack.mention("replace?", ts="1100.001100"))
    await slack.bot.wait_idle(5)
    [reply] = slack.mock.thread("C1", "1100.001100")
    assert "The extractive answer instead [1]." in reply.block_text()
    assert "half-written" not in reply.block_text()
    assert [c.method for c in slack.mock.calls if c.method in ("chat.stopStream", "chat.update")] == [
        "chat.stopStream",
        "chat.update",
    ]


async def test_a_failure_ends_the_timeline_in_error_and_shows_the_failure(slack: SlackHarness) -> None:
    """A failed question leaves no task running (an open one is marked error) and the message becomes the
    failure notice."""
    slack.pipeline.script(
        "explain",
        fail=("model_unavailable", "The model service is unavailable right now; please try again later."),
        step_delay=0.1,
    )
    await slack.event(slack.mention("explain", ts="1100.001200"))
    await slack.bot.wait_idle(5)
    [reply] = slack.mock.thread("C1", "1100.001200")
    assert reply.block_text() == "⚠️ The model service is unavailable right now; please try again later."
    assert slack.mock.calls_to("chat.stopStream") and reply.task_history
    last = {task["id"]: task["status"] for task in reply.task_history}
    assert last and all(status in ("complete", "error") for status in last.values())
    assert _record(slack).status == RecordStatus.FAILED


async def test_shutdown_mid_stream_marks_the_answer_interrupted_in_its_message() -> None:
    """With KB_RESUME_INTERRUPTED=false: stopping the bot while an answer streams marks the record
    interrupted and its stream message says so."""
    async with SlackHarness.running(options=replace(NATIVE, resume_interrupted=False)) as slack:
        gate = asyncio.Event()
        slack.pipeline.script("slow?", answer="Never sent.", gate=gate)
        await slack.event(slack.mention("slow?", ts="1100.001300"))
        await slack.mock.wait_for(
            lambda: bool(slack.pipeline.store.records) and bool(slack.reply_ref_of(_record(slack)))
        )
        assert await slack.bot.shutdown(grace=0.1) == 1
        [reply] = slack.mock.thread("C1", "1100.001300")
        assert "interrupted" in reply.block_text() and "Never sent" not in reply.block_text()
        record = _record(slack)
        assert record.status == RecordStatus.INTERRUPTED
        assert (
            slack.delivery_of(record) is not None
            and slack.delivery_of(record).state == DeliveryState.DELIVERED
        )


async def test_a_burst_in_one_channel_uses_one_posting_turn_per_answer() -> None:
    """Twelve questions at once in one channel at four posts a second: answers ready before their turn
    are posted whole in that turn (no stream, no second post), the others stream; every answer is one new
    message and all are delivered (bench_slack.py --scenario one measures the pace)."""
    options = replace(NATIVE, delivery=replace(FAST_DELIVERY, post_rate=4.0, post_burst=2))
    harness = await SlackHarness(options=options).start()
    harness.mock.channel_post_limit(per_second=4.0, burst=3)
    try:
        await asyncio.gather(
            *(harness.event(harness.mention(f"burst {i}?", ts=f"5200.{i:06d}")) for i in range(12))
        )
        await harness.bot.wait_idle(30)
        for i in range(12):
            [shown] = harness.mock.thread("C1", f"5200.{i:06d}")
            assert "The answer is in the guide" in shown.block_text() and "Sources" in shown.block_text()
        new_replies = len(harness.mock.calls_to("chat.postMessage")) + len(
            harness.mock.calls_to("chat.startStream")
        )
        assert new_replies == 12 and harness.mock.rate_limited["chat.postMessage"] == 0
        states = {
            harness.delivery_of(r).state
            for r in harness.pipeline.store.records.values()
            if harness.delivery_of(r)
        }
        assert states == {DeliveryState.DELIVERED}
    finally:
        await harness.close()
        await harness.mock.close()
    assert harness.mock.violations == []
