"""Delivery through the real AsyncApp and AsyncWebClient when the Slack Web API fails: 500s and persistent
429s on the placeholder, on the final update and on both; nothing is lost and no placeholder is stranded."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest

from adapters.slack.delivery.ledger import DeliveryState
from core.models import RecordStatus
from core.record import Record
from tests.slack.harness import FAST, FAST_DELIVERY, SlackHarness
from tests.slack.mock_slack_api import MockSlackApi


@pytest.fixture
async def slack() -> AsyncIterator[SlackHarness]:
    """A started bot (fake pipeline, fast delivery options) against a fresh mock Slack Web API."""
    harness = await SlackHarness().start()
    try:
        yield harness
    finally:
        await harness.close()
        await harness.mock.close()
    assert harness.mock.violations == []


def only_record(slack: SlackHarness) -> Record:
    [record] = slack.pipeline.store.records.values()
    return record


def visible(mock: MockSlackApi, thread_ts: str, channel: str = "C1") -> list[str]:
    """The text of every live bot message in the thread."""
    return [message.block_text() for message in mock.thread(channel, thread_ts)]


async def delivered(slack: SlackHarness, *, within: float = 20.0) -> Record:
    """Wait until the only record's delivery is final (delivered or failed) and return it."""

    def done() -> bool:
        records = list(slack.pipeline.store.records.values())
        return bool(records) and all(
            slack.delivery_of(r) is not None
            and slack.delivery_of(r).state in (DeliveryState.DELIVERED, DeliveryState.FAILED)
            for r in records
        )

    await slack.mock.wait_for(done, within=within)
    return only_record(slack)


async def placeholder_out(slack: SlackHarness, ts: str, question: str) -> asyncio.Event:
    """Script a question that waits on a gate, ask it, and wait until its placeholder is posted."""
    gate = asyncio.Event()
    slack.pipeline.script(question, answer="The answer [1].", gate=gate)
    await slack.event(slack.mention(question, ts=ts))
    await slack.mock.wait_for(
        lambda: any(slack.reply_ref_of(r) for r in slack.pipeline.store.records.values()), within=5
    )
    return gate


async def test_a_500_on_the_placeholder_is_retried_and_nothing_is_lost(slack: SlackHarness) -> None:
    """A server error on the first post is retried in the channel's turn; the answer replaces the placeholder."""
    slack.mock.fail_with("chat.postMessage", status=500, times=1)
    await slack.event(slack.mention("five hundred?", ts="5000.000100"))
    record = await delivered(slack)
    assert visible(slack.mock, "5000.000100")[0].startswith("The answer is in the guide [1].")
    assert record.status == RecordStatus.ANSWERED and slack.delivery_of(record) is not None
    assert (
        slack.delivery_of(record).state == DeliveryState.DELIVERED and slack.delivery_of(record).attempts >= 2
    )
    assert slack.mock.server_errors["chat.postMessage"] == 1


async def test_a_persistent_429_on_the_placeholder_delays_it_and_the_answer_is_posted_once(
    slack: SlackHarness,
) -> None:
    """While posts are rate limited for longer than slack_sdk's retries, the question waits (Retry-After
    honoured) instead of being dropped, and its one message carries the final answer."""
    slack.mock.throttle_for("chat.postMessage", 2.5, retry_after=1)
    await slack.event(slack.mention("throttled?", ts="5000.000200"))
    record = await delivered(slack)
    [shown] = visible(slack.mock, "5000.000200")
    assert "The answer is in the guide" in shown and "⏳" not in shown
    assert slack.mock.rate_limited["chat.postMessage"] >= 2
    assert (
        slack.delivery_of(record) is not None and slack.delivery_of(record).state == DeliveryState.DELIVERED
    )
    retries = [c.at for c in slack.mock.calls if c.method == "chat.postMessage"]
    assert all(later - earlier >= 0.9 for earlier, later in itertools.pairwise(retries))


async def test_a_500_on_the_final_update_is_retried_and_the_placeholder_replaced(slack: SlackHarness) -> None:
    """A server error on the final chat.update is retried; the placeholder becomes the answer."""
    gate = await placeholder_out(slack, "5000.000300", "update fails?")
    slack.mock.fail_with("chat.update", status=500, times=1)
    gate.set()
    record = await delivered(slack)
    [shown] = visible(slack.mock, "5000.000300")
    assert shown.startswith("The answer [1].") and "⏳" not in shown
    assert slack.mock.server_errors["chat.update"] == 1
    assert (
        slack.delivery_of(record) is not None and slack.delivery_of(record).state == DeliveryState.DELIVERED
    )


async def test_a_persistent_429_on_the_final_update_replaces_the_placeholder_by_a_new_message(
    slack: SlackHarness,
) -> None:
    """When chat.update stays rate limited past its retries, the placeholder is deleted first and the
    answer posted as a new message: one message in the thread, the answer, and no "⏳"."""
    gate = await placeholder_out(slack, "5000.000400", "edits limited?")
    slack.mock.throttle_for("chat.update", 60, retry_after=1)
    gate.set()
    record = await delivered(slack)
    [shown] = visible(slack.mock, "5000.000400")
    assert shown.startswith("The answer [1].")
    assert len(slack.mock.calls_to("chat.delete")) == 1
    assert (
        slack.delivery_of(record) is not None and slack.delivery_of(record).state == DeliveryState.DELIVERED
    )
    posted = slack.mock.thread("C1", "5000.000400")[0]
    assert slack.reply_ref_of(record) == f"C1:{posted.ts}"


async def test_when_the_placeholder_cannot_be_deleted_it_becomes_a_pointer_to_the_answer(
    slack: SlackHarness,
) -> None:
    """If the final edit fails and the placeholder cannot be deleted, it is edited into "answer below"."""
    gate = await placeholder_out(slack, "5000.000450", "pointer?")
    slack.mock.fail_with("chat.update", status=500, times=4)  # the final edit's four tries
    slack.mock.failing["chat.delete"] = "cant_delete_message_for_reasons"
    gate.set()
    await delivered(slack)
    pointer, answer = visible(slack.mock, "5000.000450")
    assert pointer == "⬇️ Answer below" and answer.startswith("The answer [1].")


async def test_failures_on_the_placeholder_and_the_final_post_are_recovered_by_the_re_deliverer(
    slack: SlackHarness,
) -> None:
    """Posts failing with 500 for longer than one delivery tries (placeholder and final answer both fail)
    leave the answered record due; the background re-deliverer posts it once Slack recovers."""
    slack.mock.fail_with("chat.postMessage", status=500, times=16)
    await slack.event(slack.mention("all down?", ts="5000.000500"))
    await slack.mock.wait_for(lambda: only_record(slack).status == RecordStatus.ANSWERED, within=10)
    record = await delivered(slack, within=30)
    assert (
        slack.delivery_of(record) is not None and slack.delivery_of(record).state == DeliveryState.DELIVERED
    )
    assert (
        slack.delivery_of(record).attempts == 17 and slack.delivery_of(record).error == ""
    )  # every call counted
    [shown] = visible(slack.mock, "5000.000500")
    assert shown.startswith("The answer is in the guide [1].")


async def test_persistent_limits_on_both_posts_and_edits_still_end_in_the_answer(slack: SlackHarness) -> None:
    """chat.update rate limited and chat.postMessage failing at the moment of the final delivery: the
    placeholder is removed, the answer is re-delivered later, and nothing shows "⏳" at the end."""
    gate = await placeholder_out(slack, "5000.000600", "everything limited?")
    slack.mock.throttle_for("chat.update", 60, retry_after=1)
    slack.mock.fail_with("chat.postMessage", status=503, times=12)
    gate.set()
    await slack.mock.wait_for(lambda: only_record(slack).status == RecordStatus.ANSWERED, within=10)
    record = await delivered(slack, within=30)
    assert (
        slack.delivery_of(record) is not None and slack.delivery_of(record).state == DeliveryState.DELIVERED
    )
    [shown] = visible(slack.mock, "5000.000600")
    assert shown.startswith("The answer [1].")


async def test_an_answer_slack_never_accepts_is_not_reported_delivered(slack: SlackHarness) -> None:
    """A permanent refusal (not_in_channel) leaves the record answered but its delivery failed, with why."""
    slack.mock.failing["chat.postMessage"] = "not_in_channel"
    await slack.event(slack.mention("nowhere?", ts="5000.000700"))
    record = await delivered(slack)
    assert record.status == RecordStatus.ANSWERED
    assert slack.delivery_of(record) is not None and slack.delivery_of(record).state == DeliveryState.FAILED
    assert slack.delivery_of(record).error == "not_in_channel"
    assert visible(slack.mock, "5000.000700") == []


async def test_duplicates_are_recognised_before_any_slack_call(slack: SlackHarness) -> None:
    """A retry of the event, and the message event of the same mention, make no Slack call at all."""
    event = slack.mention("once only?", ts="5000.000800")
    assert await slack.event(event, event_id="EvDUP") == 200
    await delivered(slack)
    await slack.bot.wait_idle(5)
    calls_before = len(slack.mock.calls)
    assert await slack.event(event, event_id="EvDUP", retry_num=1) == 200
    assert await slack.event(slack.message("<@UBOT> once only?", ts="5000.000800"), event_id="EvOTHER") == 200
    await slack.bot.wait_idle(5)
    assert slack.mock.calls[calls_before:] == []
    assert len(slack.pipeline.asked) == 1 and len(slack.mock.thread("C1", "5000.000800")) == 1


async def test_simultaneous_duplicates_post_one_placeholder_and_delete_nothing(slack: SlackHarness) -> None:
    """The app_mention, the message event and a retry arriving together give one post and no delete."""
    mention = slack.mention("together?", ts="5000.000900")
    await asyncio.gather(
        slack.event(mention, event_id="EvA"),
        slack.event(mention, event_id="EvA", retry_num=1),
        slack.event(slack.message("<@UBOT> together?", ts="5000.000900"), event_id="EvB"),
    )
    await delivered(slack)
    await slack.bot.wait_idle(5)
    assert len(slack.mock.calls_to("chat.postMessage")) == 1
    assert slack.mock.calls_to("chat.delete") == []
    assert len(slack.pipeline.store.records) == 1


async def test_a_burst_in_one_channel_waits_within_slacks_posting_limit() -> None:
    """Twelve questions at once in one channel, the mock enforcing four posts per second per channel with a
    burst of 3: every question is answered and none is lost or left with a placeholder."""
    options = replace(FAST, delivery=replace(FAST_DELIVERY, post_rate=4.0, post_burst=2))
    harness = await SlackHarness(options=options).start()
    harness.mock.channel_post_limit(per_second=4.0, burst=3)
    try:
        await asyncio.gather(
            *(harness.event(harness.mention(f"burst {i}?", ts=f"5100.{i:06d}")) for i in range(12))
        )
        await harness.bot.wait_idle(30)
        for i in range(12):
            [shown] = visible(harness.mock, f"5100.{i:06d}")
            assert shown.startswith("The answer is in the guide")
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
