"""One answer streamed with Slack's native chat streaming: the phases as a task timeline, the answer text as
Markdown, and the final message's sources, notice, trace summary and buttons as the stream's closing blocks.

It keeps the delivery rules of the edit-in-place path (adapters.slack.reply.edited_reply,
adapters.slack.delivery.outbox): the record exists before anything is sent; the stream starts in its
channel's posting turn; the stream message is the record's visible reply (delivery `placeholder` with its
reply_ref) until chat.stopStream carries the final content (`delivered`). Whenever the stream cannot carry
the final content — it expired or failed, the answer outgrew one message, the final answer is not what was
streamed (a model that failed mid-answer, a failure), or stopStream kept failing — the outbox replaces the
stream message with the final messages by chat.update, exactly as it replaces a placeholder, with its
retries, its "answer below" fallback and the background re-deliverer. A start that Slack refuses
(unknown_method, not_allowed, a missing scope, an enterprise policy) or rate-limits hands this answer to the
edit-in-place path at once.

Before the start is sent the ledger notes that a reply is on its way (Outbox.mark_starting): chat.startStream
takes no metadata, so a stream whose start was sent but whose answer never came back (a crash in that
window) is found again after a restart by adapters.slack.delivery.lost_replies. The stop carries the
record's mark (adapters.slack.delivery.reply_marks).

The transport is slack_sdk's AsyncChatStream (startStream on the first flush, appendStream, stopStream,
its text buffer kept intact when a call fails). What it lacks is written here: timed, coalesced flushes
within a workspace budget, the posting turn, error classification and the fallbacks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from slack_sdk.models.messages.chunk import Chunk
from slack_sdk.web.async_chat_stream import AsyncChatStream

from adapters.slack.delivery.ledger import DeliveryState, Tracked
from adapters.slack.delivery.outbox import Destination, Outbox
from adapters.slack.delivery.reply_marks import answer_mark
from adapters.slack.delivery.slack_errors import CALL_ERRORS, CallFailure, failure_of
from adapters.slack.delivery.update_budget import UpdateBudget
from adapters.slack.rendering.blocks import (
    MARKDOWN_TEXT_MAX,
    MESSAGE_BLOCK_CHARS_MAX,
    MESSAGE_BLOCKS_MAX,
    SlackMessage,
    block_chars,
)
from adapters.slack.rendering.final_messages import answer_footer, split_notice
from adapters.slack.rendering.progress_line import ProgressView
from adapters.slack.rendering.safe_markdown import StreamingMarkdown
from adapters.slack.rendering.task_timeline import TaskTimeline
from adapters.slack.reply.edited_reply import LiveReply
from adapters.slack.reply.streaming_support import StreamingSupport
from core.events import AnswerDelta, ContextLoading, Progress, Queued
from core.models import RecordStatus
from core.record import Record

log = logging.getLogger(__name__)

# Answer text streamed into one message at most; a longer answer is finished by the edit path's split
# messages (the message ceiling is ~13,000 characters of text, and the closing blocks count too).
STREAM_TEXT_MAX = 8000
DEAD_STREAM_CODES = frozenset({"message_not_in_streaming_state", "message_not_found", "cant_update_message"})
MAX_APPEND_FAILURES = 3


def _normalised(text: str) -> str:
    return " ".join(text.split())


class NativeReply:
    """The Slack side of one natively streamed answer; finish() ends it, close() abandons it."""

    def __init__(
        self,
        outbox: Outbox,
        tracked: Tracked,
        destination: Destination,
        *,
        recipient: tuple[str, str],
        support: StreamingSupport,
        budget: UpdateBudget,
        min_interval: float,
        fallback: Callable[[ProgressView], LiveReply],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.outbox = outbox
        self.tracked = tracked
        self.destination = destination
        self.team_id, self.user_id = recipient
        self.support = support
        self.budget = budget
        self.min_interval = min_interval
        self._make_fallback = fallback
        self._clock = clock
        self.view = ProgressView(lang=destination.lang)  # what the edit path shows, should it take over
        self.timeline = TaskTimeline(destination.lang)
        self.text = StreamingMarkdown()
        self.streamer: AsyncChatStream | None = None
        self.fallback: LiveReply | None = None
        self.dead = False  # the stream can take no more appends (expired, or failing)
        self.too_long = False  # the answer outgrew what one streamed message carries
        self.calls = 0  # streaming calls made (for the benchmark)
        self._pending = ""  # safe text not yet handed to the stream
        self._in_buffer = 0  # text the streamer kept in its buffer after a failed call
        self._streamed = 0  # safe text characters handed to the stream successfully
        self._failures = 0
        self._final: list[SlackMessage] | None = None
        self._opening: asyncio.Task[None] | None = None
        self._flusher: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._send_lock = asyncio.Lock()
        self._finished = False
        self._last_call = clock()

    # ---------- start
    def begin(self, *, queued_behind: int = 0) -> None:
        """Queue the stream's start in the channel's posting turn (returns at once)."""
        first: Progress = Queued(position=queued_behind) if queued_behind else ContextLoading()
        self.view.apply(first)
        self.timeline.apply(first)
        self._opening = asyncio.create_task(self._start(), name=f"stream {self.tracked.record.id}")

    async def _start(self) -> None:
        destination = self.destination
        async with self.outbox.pacer.turn(destination.channel):
            if self._final is not None:  # the answer was ready first: this turn posts it, no stream needed
                await self._post_final_in_turn(self._final[0])
                return
            self.tracked = await self.outbox.mark_starting(self.tracked)
            streamer = await self.outbox.client.chat_stream(
                channel=destination.channel,
                thread_ts=destination.thread_ts,
                recipient_team_id=self.team_id,
                recipient_user_id=self.user_id,
                task_display_mode="timeline",
                buffer_size=MARKDOWN_TEXT_MAX,
            )
            text = self._take_text()
            self.calls += 1
            try:
                await streamer.append(markdown_text=text or None, chunks=list(self.timeline.all()))
                failure = None
            except CALL_ERRORS as exc:
                failure = failure_of(exc)
        delivery = replace(self.tracked.delivery, attempts=self.tracked.delivery.attempts + 1)
        if failure is not None or not streamer.ts:
            code = failure.code if failure else "no_ts"
            if failure is not None:
                self.outbox.failures.append(failure)
                if not failure.maybe_done:  # Slack answered: no stream was started
                    delivery = replace(delivery, starting_at=0.0)
            refused = self.support.refused_by(self.team_id, code)
            log.info(
                "chat.startStream in %s failed (%s): this answer is edited in place%s",
                destination.channel,
                code,
                "" if refused else " (not a refusal; streaming stays on)",
            )
            self.tracked = await self.outbox.save(self.tracked, replace(delivery, error=code))
            self._pending = ""  # the edit path renders from the view, which has everything
            self._fall_back()
            return
        self.streamer = streamer
        self._streamed += len(text)
        self._last_call = self._clock()
        delivery = replace(
            delivery,
            state=DeliveryState.PLACEHOLDER,
            parts=0,
            error="",
            reply_ref=destination.ref(streamer.ts),
        )
        self.tracked = await self.outbox.save(self.tracked, delivery)
        self._flusher = asyncio.create_task(self._flush_loop(), name=f"stream flush {self.tracked.record.id}")
        self._wake.set()

    async def _post_final_in_turn(self, message: SlackMessage) -> None:
        """Post the final content's first message in the turn already held (finish() does the rest)."""
        self.tracked, ts, failure, tries = await self.outbox.post_reply_in_turn(
            self.tracked, self.destination, lambda: message
        )
        delivery = replace(self.tracked.delivery, attempts=self.tracked.delivery.attempts + tries)
        if ts is None:
            error = failure.code if failure else "?"
            self.tracked = await self.outbox.save(self.tracked, replace(delivery, error=error))
            return
        delivery = replace(
            delivery, state=DeliveryState.PLACEHOLDER, parts=1, error="", reply_ref=self.destination.ref(ts)
        )
        self.tracked = await self.outbox.save(self.tracked, delivery)

    def _fall_back(self) -> None:
        """Hand this answer to the edit-in-place path, showing everything seen so far."""
        fallback = self._make_fallback(self.view)
        fallback.tracked = self.tracked
        self.fallback = fallback
        if self._final is None:
            fallback.open(self.view.message)

    # ---------- progress
    def progress(self, event: Progress) -> None:
        """Fold a pipeline event into the timeline or the streamed text (never blocks)."""
        changed = self.view.apply(event)
        if self.fallback is not None:
            if changed:
                self.fallback.show(self.view.message)
            return
        if isinstance(event, AnswerDelta):
            self._pending += self.text.feed(event.text)
        elif not self.timeline.apply(event):
            return
        self._wake.set()

    def _take_text(self) -> str:
        """The next piece of text for one call: within the per-call limit and the message's capacity."""
        room = min(MARKDOWN_TEXT_MAX - self._in_buffer, STREAM_TEXT_MAX - self._streamed - self._in_buffer)
        if len(self._pending) > room:
            self.too_long = True
        text, self._pending = self._pending[: max(0, room)], self._pending[max(0, room) :]
        if self.too_long:
            self._pending = ""  # the final messages carry the whole answer
        return text

    async def _flush_loop(self) -> None:
        while not self._finished and not self.dead:
            await self._wake.wait()
            self._wake.clear()
            while not self._finished and not self.dead and self._has_unsent():
                delay = self._last_call + self.min_interval - self._clock()
                if delay > 0:
                    await asyncio.sleep(delay)
                    continue
                if not self.budget.try_acquire():
                    await asyncio.sleep(max(self.min_interval, self.budget.paused_for()))
                    continue
                async with self._send_lock:
                    if self._finished:
                        return
                    await self._append()

    def _has_unsent(self) -> bool:
        """Text or task changes not yet shown (including text a failed call left in the streamer)."""
        return bool(self._pending or self._in_buffer or self.timeline.has_changes)

    async def _append(self) -> None:
        assert self.streamer is not None
        text, chunks = self._take_text(), self.timeline.changes()
        if not text and not chunks and not self._in_buffer:
            return
        self.calls += 1
        try:
            await self.streamer.append(markdown_text=text or None, chunks=list(chunks))
        except CALL_ERRORS as exc:
            self._append_failed(failure_of(exc), text, chunks)
        else:
            self._streamed += self._in_buffer + len(text)
            self._in_buffer = self._failures = 0
        finally:
            self._last_call = self._clock()

    def _append_failed(self, failure: CallFailure, text: str, chunks: list[Any]) -> None:
        self.outbox.failures.append(failure)
        self._in_buffer += len(text)  # AsyncChatStream keeps unsent text in its buffer
        self.timeline.resend([chunk.id for chunk in chunks])
        self._failures += 1
        if failure.retry_after is not None:
            self.budget.pause(failure.retry_after)
        if (
            failure.code in DEAD_STREAM_CODES
            or not failure.transient
            or self._failures >= MAX_APPEND_FAILURES
        ):
            log.info("the stream of record %s ended early (%s)", self.tracked.record.id, failure.code)
            self.dead = True

    # ---------- the end
    async def finish(self, record: Record, messages: list[SlackMessage]) -> Tracked:
        """Make the final messages the record's visible reply; returns the record with its delivery."""
        self._final = messages
        try:
            if self._opening is not None:
                await self._opening
            if self.fallback is not None:
                self.tracked = await self.fallback.finish(record, messages)
                return self.tracked
            await self._stop_flushing()
            if self.streamer is not None and await self._finish_in_stream(record):
                return self.tracked
            current = Tracked(record, self.tracked.delivery)
            self.tracked = await self.outbox.deliver(current, messages, self.destination)
            return self.tracked
        finally:
            await self.close()

    def _carries(self, record: Record) -> bool:
        """Whether the stream can end as this record's final message (what it streamed is the answer)."""
        if self.dead or self.too_long or record.status != RecordStatus.ANSWERED:
            return False
        body, _ = split_notice(record.answer or "", record.details.notice)
        return _normalised(self.text.raw) == _normalised(body)

    async def _finish_in_stream(self, record: Record) -> bool:
        """Stop the stream with the final content (True), or just end it so the outbox can replace it."""
        carries = self._carries(record)
        rest = ""
        blocks: list[dict[str, Any]] | None = None
        if carries:
            rest = self._pending + self.text.finish()
            self._pending = ""
            blocks = answer_footer(record, self.destination.lang)
            text_chars = self._streamed + self._in_buffer + len(rest)
            fits = text_chars <= STREAM_TEXT_MAX and len(blocks) <= MESSAGE_BLOCKS_MAX
            if not fits or text_chars + sum(map(block_chars, blocks)) > MESSAGE_BLOCK_CHARS_MAX:
                carries, rest, blocks = False, "", None  # the whole message stays within Slack's size
        self.timeline.end(failed=record.status != RecordStatus.ANSWERED)
        tries = self.outbox.options.final_update_tries if carries else 1
        failure, attempts = await self._stop(rest, list(self.timeline.changes()), blocks, tries=tries)
        delivery = replace(self.tracked.delivery, attempts=self.tracked.delivery.attempts + attempts)
        current = Tracked(record, delivery)
        if carries and failure is None:
            self.tracked = await self.outbox.save(
                current, replace(delivery, state=DeliveryState.DELIVERED, parts=1, error="", due=0.0)
            )
            return True
        self.tracked = await self.outbox.save(current, delivery)
        return False

    async def _stop(
        self, text: str, chunks: list[Chunk], blocks: list[dict[str, Any]] | None, *, tries: int
    ) -> tuple[CallFailure | None, int]:
        """chat.stopStream, retried on transient failures (Retry-After honoured); (failure, calls made)."""
        assert self.streamer is not None
        if self.dead:
            return CallFailure("message_not_in_streaming_state"), 0
        failure: CallFailure | None = None
        for attempt in range(1, tries + 1):
            self.calls += 1
            try:
                await self.streamer.stop(
                    markdown_text=text or None,
                    chunks=chunks,
                    blocks=blocks,
                    metadata=answer_mark(self.tracked.record.id),
                )
                return None, attempt
            except CALL_ERRORS as exc:
                failure = failure_of(exc)
            self.outbox.failures.append(failure)
            text = ""  # the streamer kept it in its buffer
            log.info(
                "chat.stopStream of record %s failed (%s), try %s",
                self.tracked.record.id,
                failure.code,
                attempt,
            )
            if failure.code in DEAD_STREAM_CODES or not failure.transient or attempt == tries:
                return failure, attempt
            await asyncio.sleep(failure.retry_after if failure.retry_after is not None else 0.5 * attempt)
        return failure, tries

    async def _stop_flushing(self) -> None:
        self._finished = True
        self._wake.set()
        async with self._send_lock:  # an append already on the wire completes first
            task, self._flusher = self._flusher, None
        if task is not None and task is not asyncio.current_task():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def close(self) -> None:
        """Stop streaming without sending anything more (shutdown, a crash of the handler)."""
        self._finished = True
        if self._opening is not None and not self._opening.done():
            self._opening.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._opening
        task, self._flusher = self._flusher, None
        if task is not None and task is not asyncio.current_task():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self.fallback is not None:
            await self.fallback.close()
