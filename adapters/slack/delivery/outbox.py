"""The delivery component: a record's Slack messages go out through here, and their state is kept in the
delivery ledger (pending → placeholder → delivered, or failed, with attempts, the last error and when the
next attempt is due).

Rules it keeps:
- new messages go through the per-channel pacer (ChannelPacer), in order, honouring Retry-After;
- the final content replaces the placeholder: the final chat.update is retried (outside the per-minute
  edit budget, still honouring Retry-After); when that keeps failing the placeholder is deleted, or turned
  into a short "answer below" pointer, before the final content is posted as a new message;
- a record is marked delivered only after Slack acknowledged every part; a transient failure leaves it
  due again after a backoff, for the re-deliverer (SlackBot.maintain_once, every instance), until
  max_attempts;
- before a record's first visible message is posted, the ledger notes that one is on its way
  (Delivery.starting_at), so a crash before Slack's answer leaves a trace that the next delivery follows
  (adapters.slack.delivery.lost_replies); every message carries the bot's mark (reply_marks).
slack_sdk retries a 429 only inside one call, with no notion of a channel's queue or of a record's state,
which is why this is written here; its backoff calculator is reused.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

from slack_sdk.http_retry.builtin_interval_calculators import BackoffRetryIntervalCalculator
from slack_sdk.http_retry.jitter import Jitter
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.delivery.channel_pacer import ChannelPacer
from adapters.slack.delivery.ledger import Delivery, DeliveryLedger, DeliveryState, Tracked
from adapters.slack.delivery.reply_marks import answer_mark
from adapters.slack.delivery.slack_errors import CALL_ERRORS, CallFailure, failure_of
from adapters.slack.delivery.update_budget import UpdateBudget
from adapters.slack.rendering.blocks import SlackMessage
from adapters.slack.rendering.final_messages import pointer_message

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class OutboxOptions:
    """Retry and lease knobs (the defaults suit Slack; tests shrink the times)."""

    post_rate: float = 1.0
    post_burst: int = 2
    rate_limited_tries: int = 10  # 429s one post waits out (each after its Retry-After) before handing over
    server_error_tries: int = 4  # tries of one post failing with server errors before handing over
    final_update_tries: int = 4  # tries of the final chat.update before the placeholder is replaced
    retry_base: float = 0.5  # backoff factor for server errors within one delivery
    retry_cap: float = 4.0
    lease: float = 300.0  # while an instance delivers a record, no other one takes it
    redeliver_base: float = 5.0  # backoff factor between re-delivery rounds
    redeliver_cap: float = 600.0
    max_attempts: int = 30  # Slack calls for one record before its delivery is marked failed
    repost_after: int = 12  # attempts after which the final is posted even if the placeholder stays


@dataclass(frozen=True, slots=True)
class Destination:
    """Where a record's reply lives: the channel, the thread, and the placeholder if one was posted."""

    channel: str
    thread_ts: str
    lang: str

    def ref(self, ts: str) -> str:
        return f"{self.channel}:{ts}"


class ProportionalJitter(Jitter):
    """Up to a quarter more than the backoff (slack_sdk's RandomJitter adds up to a whole second, which
    would swamp sub-second backoffs)."""

    def recalculate(self, duration: float) -> float:
        return duration * (1.0 + random.random() / 4)


class Outbox:
    """Posts, edits and deletes for records, with their delivery state written to the ledger."""

    def __init__(
        self,
        client: AsyncWebClient,
        ledger: DeliveryLedger,
        *,
        budget: UpdateBudget,
        options: OutboxOptions | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.client = client
        self.ledger = ledger
        self.budget = budget
        self.options = options or OutboxOptions()
        self.pacer = ChannelPacer(rate=self.options.post_rate, burst=self.options.post_burst)
        self._clock = clock
        self._backoff = BackoffRetryIntervalCalculator(
            backoff_factor=self.options.retry_base, jitter=ProportionalJitter()
        )
        self._rounds = BackoffRetryIntervalCalculator(
            backoff_factor=self.options.redeliver_base, jitter=ProportionalJitter()
        )
        self.failures: list[CallFailure] = []  # every failed call, for tests and benchmarks

    # ---------- single calls
    async def post(
        self, destination: Destination, render: Callable[[], SlackMessage], *, mark: dict[str, Any]
    ) -> tuple[str | None, CallFailure | None, int]:
        """Post in the thread when the channel's turn comes: (ts, None, tries) or (None, failure, tries).

        `render` runs at send time, so a post that waited in the queue sends the latest content. Rate
        limits (up to rate_limited_tries, each after its Retry-After) and server errors (up to
        server_error_tries, with backoff) are retried inside the turn, so the channel keeps its order.
        """
        async with self.pacer.turn(destination.channel):
            return await self.post_in_turn(destination, render, mark=mark)

    async def post_in_turn(
        self, destination: Destination, render: Callable[[], SlackMessage], *, mark: dict[str, Any]
    ) -> tuple[str | None, CallFailure | None, int]:
        """post() for a caller already holding the channel's turn (a stream start that found its answer
        ready uses its turn to post the answer); `mark` is the message's metadata (reply_marks)."""
        tries = limited = errors = 0
        while True:
            message = render()
            tries += 1
            try:
                response = await self.client.chat_postMessage(
                    channel=destination.channel,
                    thread_ts=destination.thread_ts,
                    text=message.text,
                    blocks=message.blocks,
                    metadata=mark,
                )
                return str(response["ts"]), None, tries
            except CALL_ERRORS as exc:
                failure = failure_of(exc)
            self.failures.append(failure)
            log.info("chat.postMessage in %s failed (%s), try %s", destination.channel, failure.code, tries)
            if failure.retry_after is not None:
                limited += 1
                if limited >= self.options.rate_limited_tries:
                    return None, failure, tries
                self.pacer.pause(destination.channel, failure.retry_after)
                await asyncio.sleep(failure.retry_after)
                continue
            errors += 1
            if not failure.transient or errors >= self.options.server_error_tries:
                return None, failure, tries
            await asyncio.sleep(self._pause(errors))

    def _pause(self, errors: int) -> float:
        """Backoff before retrying a server error within one delivery (capped)."""
        return min(self.options.retry_cap, self._backoff.calculate_sleep_duration(errors - 1))

    async def update(
        self, channel: str, ts: str, message: SlackMessage, *, tries: int, mark: dict[str, Any] | None = None
    ) -> tuple[CallFailure | None, int]:
        """A final chat.update retried up to `tries` times outside the edit budget (Retry-After honoured);
        with `mark`, the message's metadata is (re)written too (without, Slack keeps what it had)."""
        failure: CallFailure | None = None
        for attempt in range(1, tries + 1):
            wait = self.budget.paused_for()
            if wait:
                await asyncio.sleep(wait)
            self.budget.spend()
            try:
                await self.client.chat_update(
                    channel=channel, ts=ts, text=message.text, blocks=message.blocks, metadata=mark
                )
                return None, attempt
            except CALL_ERRORS as exc:
                failure = failure_of(exc)
            self.failures.append(failure)
            log.info("final chat.update %s:%s failed (%s), try %s", channel, ts, failure.code, attempt)
            if not failure.transient or attempt == tries:
                return failure, attempt
            if failure.retry_after is not None:
                self.budget.pause(failure.retry_after)
            else:
                await asyncio.sleep(self._pause(attempt))
        return failure, tries

    async def delete(self, channel: str, ts: str) -> CallFailure | None:
        try:
            await self.client.chat_delete(channel=channel, ts=ts)
            return None
        except CALL_ERRORS as exc:
            failure = failure_of(exc)
            self.failures.append(failure)
            return None if failure.gone else failure

    async def clear_placeholder(self, destination: Destination, ts: str) -> CallFailure | None:
        """Delete the placeholder, or else turn it into an "answer below" pointer; None when done."""
        failure = await self.delete(destination.channel, ts)
        if failure is None:
            return None
        pointed, _ = await self.update(destination.channel, ts, pointer_message(destination.lang), tries=1)
        return None if pointed is None or pointed.gone else pointed

    # ---------- state
    async def save(self, tracked: Tracked, delivery: Delivery) -> Tracked:
        """Write the record's delivery (reply_ref included) and return the record with it. A known reply
        leaves no start outstanding (starting_at is cleared with it)."""
        if delivery.reply_ref and delivery.starting_at:
            delivery = replace(delivery, starting_at=0.0)
        return Tracked(tracked.record, await self.ledger.save_delivery(tracked.record.id, delivery))

    async def post_reply(
        self, tracked: Tracked, destination: Destination, render: Callable[[], SlackMessage]
    ) -> tuple[Tracked, str | None, CallFailure | None, int]:
        """Post a record's first visible message in its channel's turn (see post_reply_in_turn)."""
        async with self.pacer.turn(destination.channel):
            return await self.post_reply_in_turn(tracked, destination, render)

    async def post_reply_in_turn(
        self, tracked: Tracked, destination: Destination, render: Callable[[], SlackMessage]
    ) -> tuple[Tracked, str | None, CallFailure | None, int]:
        """Note in the ledger that the record's first message is on its way, then post it with the record's
        mark: (the record with its delivery, ts, failure, tries). The caller saves the outcome; the note
        stays while the post may have reached Slack (it is cleared once the reply's ts is saved, or here
        when Slack surely posted nothing)."""
        tracked = await self.mark_starting(tracked)
        ts, failure, tries = await self.post_in_turn(destination, render, mark=answer_mark(tracked.record.id))
        if ts is None and failure is not None and not failure.maybe_done:
            tracked = Tracked(tracked.record, replace(tracked.delivery, starting_at=0.0))
        return tracked, ts, failure, tries

    async def mark_starting(self, tracked: Tracked) -> Tracked:
        """Before a record's first message (a post or a stream start) is sent: note when, so that a crash
        before Slack's answer leaves the next delivery a message to look for."""
        return await self.save(tracked, replace(tracked.delivery, starting_at=self._clock()))

    async def lease(self, tracked: Tracked) -> Tracked:
        """Keep other instances' re-deliverers off this record while this one delivers it."""
        return await self.save(tracked, replace(tracked.delivery, due=self._clock() + self.options.lease))

    async def retry_later(self, tracked: Tracked, delivery: Delivery, failure: CallFailure) -> Tracked:
        """Leave the record for the re-deliverer after a backoff (its attempts counted in `delivery`), or
        mark it failed for good."""
        error = failure.code
        record_id = tracked.record.id
        if not failure.transient or delivery.attempts >= self.options.max_attempts:
            log.error("giving up delivering record %s: %s", record_id, error)
            return await self.save(
                tracked, replace(delivery, state=DeliveryState.FAILED, error=error, due=0.0)
            )
        rounds = max(0, delivery.attempts // max(1, self.options.final_update_tries) - 1)
        wait = min(self.options.redeliver_cap, self._rounds.calculate_sleep_duration(rounds))
        wait = max(wait, failure.retry_after or 0.0)
        log.warning("delivery of record %s failed (%s); retrying in %.0f s", record_id, error, wait)
        return await self.save(tracked, replace(delivery, error=error, due=self._clock() + wait))

    # ---------- the final content
    async def deliver(
        self,
        tracked: Tracked,
        messages: list[SlackMessage],
        destination: Destination,
        *,
        first_edit: Callable[[SlackMessage], Awaitable[CallFailure | None]] | None = None,
    ) -> Tracked:
        """Make messages the record's visible reply, from wherever its delivery stands; returns it with its
        new delivery. first_edit (the live editor's final edit, within the budget) is the first try of
        replacing the placeholder; later tries bypass the budget."""
        tracked = await self.lease(tracked)
        delivery = tracked.delivery
        ts = delivery.reply_ts
        if delivery.parts == 0 and ts is not None:
            failure: CallFailure | None
            if first_edit is not None:
                failure, tries = await first_edit(messages[0]), 1
                if failure is not None and failure.transient:
                    failure, more = await self.update(
                        destination.channel,
                        ts,
                        messages[0],
                        tries=self.options.final_update_tries - 1,
                        mark=answer_mark(tracked.record.id),
                    )
                    tries += more
            else:
                failure, tries = await self.update(
                    destination.channel,
                    ts,
                    messages[0],
                    tries=self.options.final_update_tries,
                    mark=answer_mark(tracked.record.id),
                )
            delivery = replace(delivery, attempts=delivery.attempts + tries)
            if failure is None:
                delivery = replace(delivery, state=DeliveryState.PLACEHOLDER, parts=1, error="")
                tracked = await self.save(tracked, delivery)
            elif failure.gone:
                ts = None  # the placeholder is gone: post the final content instead
            else:
                cleared = await self.clear_placeholder(destination, ts)
                delivery = replace(delivery, attempts=delivery.attempts + 1)
                if cleared is not None and delivery.attempts < self.options.repost_after:
                    return await self.retry_later(tracked, replace(delivery, error=failure.code), failure)
                ts = None
            if ts is None:
                delivery = replace(delivery, state=DeliveryState.PENDING, reply_ref=None)
                tracked = await self.save(tracked, delivery)
        for index in range(delivery.parts, len(messages)):
            render = functools.partial(_same, messages[index])
            if index == 0:
                tracked, posted, failure, tries = await self.post_reply(
                    Tracked(tracked.record, delivery), destination, render
                )
                delivery = tracked.delivery
            else:
                mark = answer_mark(tracked.record.id, index)
                posted, failure, tries = await self.post(destination, render, mark=mark)
            delivery = replace(delivery, attempts=delivery.attempts + tries)
            if posted is None:
                assert failure is not None
                return await self.retry_later(tracked, delivery, failure)
            delivery = replace(delivery, state=DeliveryState.PLACEHOLDER, parts=index + 1, error="")
            if index == 0:
                delivery = replace(delivery, reply_ref=destination.ref(posted))
            tracked = await self.save(tracked, delivery)
        return await self.save(tracked, replace(delivery, state=DeliveryState.DELIVERED, error="", due=0.0))


def _same(message: SlackMessage) -> SlackMessage:
    return message
