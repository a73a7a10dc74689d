"""One question, answered in its Slack thread: the pipeline stores it, then placeholder, phase edits, final delivery.

The Slack side never writes a record: it hands the pipeline an Ask (or AskAgain) and shows what comes back.
Nothing is posted before the pipeline announces the stored record (Accepted), so a failed post never loses a
question: the record, and its delivery in the ledger, say what it still has to show, and the outbox or the
re-deliverer shows it. Repeats are recognised before (adapters.slack.inbound.intake); a repeat of an
interrupted question with nothing final shown is delivered again.

An interrupted question (a crash, a shutdown, an instance that died) is answered again once, in its visible
reply when there is one, unless KB_RESUME_INTERRUPTED=false: then, or when that answer is interrupted too,
its reply says "please ask again". A reply whose ts a crash never saw is found in the thread first
(adapters.slack.delivery.lost_replies), so the thread ends with one reply.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.delivery.ledger import Delivery, DeliveryLedger, DeliveryState, Tracked
from adapters.slack.delivery.lost_replies import LostReplies
from adapters.slack.delivery.outbox import Destination, Outbox
from adapters.slack.delivery.reply_marks import notice_mark
from adapters.slack.delivery.slack_errors import CALL_ERRORS, CallFailure
from adapters.slack.delivery.update_budget import UpdateBudget
from adapters.slack.inbound.channel_config import ChannelConfig, channel_scope
from adapters.slack.inbound.intake import (
    EngagedThreads,
    Intake,
    NewQuestion,
    Unanswerable,
    asker,
    conversation_key,
    reply_address,
)
from adapters.slack.inbound.triggers import IncomingMessage
from adapters.slack.pipeline_port import AnswerPipeline, SlackReads
from adapters.slack.rendering.blocks import SlackMessage
from adapters.slack.rendering.final_messages import (
    answer_messages,
    final_messages,
    notice_message,
    record_lang,
)
from adapters.slack.rendering.progress_line import ProgressView
from adapters.slack.rendering.texts import t
from adapters.slack.reply.edited_reply import LiveReply
from adapters.slack.reply.streamed_reply import NativeReply
from adapters.slack.reply.streaming_support import StreamingSupport
from core.commands import Ask, AskAgain, Question
from core.events import Accepted, Done, Failed, Progress
from core.models import ConversationKey, RecordStatus
from core.record import Record

log = logging.getLogger(__name__)
DEFAULT_STREAM_INTERVAL = 0.5  # seconds between appends to one stream (Slack suggests 0.5-1 s)
MAX_RESUMES = 1  # an interrupted question is answered again once; interrupted again, it gets the notice


class AnswerReply(Protocol):
    """The Slack side of one answer in flight: edited in place (LiveReply) or streamed (NativeReply)."""

    destination: Destination

    def begin(self, *, queued_behind: int = 0) -> None:
        """Show that the question is being worked on (returns at once)."""
        ...

    def progress(self, event: Progress) -> None:
        """Fold a pipeline event into what the reply shows (never blocks)."""
        ...

    async def finish(self, record: Record, messages: list[SlackMessage]) -> Tracked:
        """Make the final messages the record's visible reply; the record with its delivery."""
        ...

    async def close(self) -> None:
        """Stop sending anything more for this answer."""
        ...


@dataclass(frozen=True, slots=True)
class ReplyOptions:
    """How replies show up while they are written (edit pacing, native streaming)."""

    min_edit_interval: float = 1.0
    resume_interrupted: bool = True
    stream_interval: float = DEFAULT_STREAM_INTERVAL


@dataclass(frozen=True, slots=True)
class _Asking:
    """One command on its way through the pipeline, and what the Slack side knows about it."""

    command: Question
    key: ConversationKey
    lang: str
    message: IncomingMessage | None = None  # the Slack message asking (None when answering again)
    event_id: str | None = None
    first_in_dm_thread: bool = False
    again: Tracked | None = None  # answering a stored record again, in place of its visible reply


def recipient_of(record: Record) -> tuple[str, str] | None:
    """(team id, user id) of the person who asked, from records.asked_by "slack:T:U"."""
    parts = (record.asked_by or "").split(":")
    if len(parts) != 3 or parts[0] != "slack" or not parts[1] or not parts[2]:
        return None
    return parts[1], parts[2]


def destination_of(record: Record) -> Destination | None:
    """Where a record's reply goes (None for records that are not Slack questions)."""
    key = conversation_key(record)
    return None if key is None else Destination(key.channel_id, key.thread_ts, record_lang(record))


class Answerer:
    """Runs questions through the pipeline and keeps their thread replies up to date."""

    def __init__(
        self,
        client: AsyncWebClient,
        pipeline: AnswerPipeline,
        *,
        reads: SlackReads,
        ledger: DeliveryLedger,
        intake: Intake,
        outbox: Outbox,
        engaged: EngagedThreads,
        channel_config: Callable[[str], ChannelConfig],
        all_datasets: Callable[[], Awaitable[Sequence[str]]] | None = None,
        options: ReplyOptions | None = None,
        streaming: StreamingSupport | None = None,
        stream_budget: UpdateBudget | None = None,
        on_first_in_dm_thread: Callable[[str, str, str], Coroutine[Any, Any, None]] | None = None,
    ) -> None:
        self.client = client
        self.pipeline = pipeline
        self.reads = reads
        self.ledger = ledger
        self.intake = intake
        self.outbox = outbox
        self.engaged = engaged
        self.channel_config = channel_config
        self.all_datasets = all_datasets
        self.options = options or ReplyOptions()
        self.streaming = streaming or StreamingSupport("edit")
        self.stream_budget = stream_budget or UpdateBudget(limit=90, reserve=0)
        self.on_first_in_dm_thread = on_first_in_dm_thread  # (channel, thread_ts, question): the pane's title
        self.lost = LostReplies(outbox, reads)  # told the bot's identity by SlackBot.start
        self.in_flight: dict[int, AnswerReply] = {}
        self._active: dict[str, int] = {}
        self._turns: dict[str, asyncio.Event] = {}
        self._background: set[asyncio.Task[None]] = set()

    # ---------- what the intake found
    async def answer(self, arrival: NewQuestion) -> None:
        """Ask the pipeline; every outcome ends in a delivered final message (or a notice for bad input)."""
        message = arrival.message
        command = Ask(
            message.key,
            arrival.text,
            arrival.scope,
            event_key=message.event_key,
            asked_by=asker(message.team_id, message.user_id),
            reply_to=reply_address(message.key),
        )
        first_in_dm_thread = message.is_dm and message.in_thread
        await self._ask(
            _Asking(command, message.key, arrival.lang, message, arrival.event_id, first_in_dm_thread)
        )

    async def decline(self, arrival: Unanswerable) -> None:
        """No knowledge base in this channel: say so in the thread."""
        message = arrival.message
        await self.notify(message.channel_id, message.thread_ts, t("no_kb", arrival.lang), arrival.lang)

    async def on_duplicate(self, record: Record | None) -> None:
        """A repeated delivery: silence, except that an interrupted question with nothing final shown is
        delivered now (answered again, or its notice), unless some instance is delivering it."""
        if record is None or record.status != RecordStatus.INTERRUPTED:
            return
        delivery = await self.ledger.read_delivery(record.id)
        if delivery is None or delivery.state == DeliveryState.DELIVERED:
            return
        taken = await self.ledger.take_due_deliveries(
            time.time(), lease=self.outbox.options.lease, settle=0.0, record_id=record.id
        )
        for due in taken:
            await self.redeliver(due)

    async def notify(self, channel: str, thread_ts: str, text: str, lang: str) -> None:
        """A one-off notice in the thread (no record), paced like every post."""
        await self.outbox.post(
            Destination(channel, thread_ts, lang), lambda: notice_message(text), mark=notice_mark(thread_ts)
        )

    def resumable(self, tracked: Tracked) -> bool:
        """Answer this record again rather than show how it ended: it was interrupted, resuming is on, it
        was not answered again too often already, and nothing final is shown for it."""
        delivery = tracked.delivery
        return (
            self.options.resume_interrupted
            and tracked.record.status == RecordStatus.INTERRUPTED
            and delivery.resumes < MAX_RESUMES
            and delivery.state in (DeliveryState.PENDING, DeliveryState.PLACEHOLDER)
            and delivery.parts == 0
        )

    async def leave_for_later(self, tracked: Tracked) -> None:
        """Shutting down: keep an interrupted record's reply as it is and make its delivery due at once, so
        the next start (or another instance's re-deliverer) answers it again."""
        await self.outbox.save(tracked, replace(tracked.delivery, due=time.time()))

    async def _answer_again(self, tracked: Tracked) -> None:
        """Count the attempt and lease the record (no re-deliverer takes it meanwhile), then answer it again
        in the background."""
        delivery = replace(tracked.delivery, resumes=tracked.delivery.resumes + 1)
        tracked = await self.outbox.lease(Tracked(tracked.record, delivery))
        self._in_background(self.resume(tracked))

    async def resume(self, tracked: Tracked) -> None:
        """Answer an interrupted record again, in place of its visible reply (KB_RESUME_INTERRUPTED)."""
        record = tracked.record
        key = conversation_key(record)
        if key is None or record.id in self.in_flight:
            return
        scope = await channel_scope(self.channel_config(key.channel_id), self.all_datasets)
        if self.intake.private_scopes is not None:
            scope = await self.intake.private_scopes.scope(
                scope,
                channel_id=key.channel_id,
                user_id=(record.asked_by or "").rsplit(":", 1)[-1],
                is_dm=key.channel_id.startswith("D"),
            )
        command = AskAgain(key, record.id, scope)
        await self._ask(_Asking(command, key, record_lang(record), again=tracked))

    # ---------- one command through the pipeline
    async def _ask(self, asking: _Asking) -> None:
        """Questions of one thread reach the pipeline in arrival order: each waits until the previous one has
        entered the pipeline (holding or queued on the conversation lock) before asking."""
        key_id = asking.key.as_id()
        ahead = self._active.get(key_id, 0)
        self._active[key_id] = ahead + 1
        previous, entered = self._turns.get(key_id), asyncio.Event()
        self._turns[key_id] = entered
        reply: AnswerReply | None = None
        record: Record | None = None
        destination = Destination(asking.key.channel_id, asking.key.thread_ts, asking.lang)
        try:
            if previous is not None:
                await previous.wait()
            async with contextlib.aclosing(self.pipeline.ask(asking.command)) as events:  # type: ignore[type-var]
                async for event in events:
                    entered.set()
                    if isinstance(event, Accepted):
                        record = event.record
                        reply = await self._accepted(asking, record, destination, ahead)
                    elif isinstance(event, Done):
                        assert reply is not None
                        await reply.finish(event.record, answer_messages(event.record))
                        return
                    elif isinstance(event, Failed):
                        await self._failed(asking, event, reply, destination)
                        return
                    elif reply is not None:
                        reply.progress(event)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("answering in %s failed", key_id)
            await self._broke(asking, reply, record, destination)
        finally:
            entered.set()
            if self._turns.get(key_id) is entered:
                del self._turns[key_id]
            self._active[key_id] -= 1
            if not self._active[key_id]:
                del self._active[key_id]
            if record is not None:
                self.in_flight.pop(record.id, None)
                self._in_background(self._set_status(destination, ""))
            if reply is not None:
                await reply.close()

    async def _accepted(
        self, asking: _Asking, record: Record, destination: Destination, ahead: int
    ) -> AnswerReply:
        """The record is stored: lease its delivery, remember the thread, and show the placeholder."""
        await self.intake.note_event(asking.event_id, record.id)
        self.engaged.remember(asking.key)
        placeholder = None
        if asking.again is not None:
            placeholder = asking.again.delivery.reply_ts
            delivery = asking.again.delivery
            if placeholder is not None:  # its visible reply becomes the placeholder
                delivery = replace(delivery, state=DeliveryState.PLACEHOLDER, parts=0, error="")
        else:
            delivery = Delivery(due=record.created_at)
        tracked = await self.outbox.lease(Tracked(record, delivery))
        title = self.on_first_in_dm_thread if asking.first_in_dm_thread else None
        if title is not None and len(await self.reads.list_records(record.conversation_id, limit=2)) == 1:
            self._in_background(title(destination.channel, destination.thread_ts, record.question))
        reply = self._new_reply(tracked, destination, placeholder=placeholder)
        self.in_flight[record.id] = reply
        reply.begin(queued_behind=ahead)
        self._in_background(self._set_status(destination, t("status", asking.lang)))
        return reply

    async def _failed(
        self, asking: _Asking, failed: Failed, reply: AnswerReply | None, destination: Destination
    ) -> None:
        """Show how a failed question ended: in its reply, as a notice (bad input), or not at all (a repeat)."""
        if reply is not None and failed.record is not None:
            await reply.finish(failed.record, final_messages(failed.record))
        elif failed.code == "duplicate":
            await self.on_duplicate(failed.record)
        elif asking.message is not None:  # bad input: nothing was stored, the message is answered by a notice
            if await self.intake.claim_message(asking.message, asking.event_id):
                text = t("failed", asking.lang, message=failed.message)
                await self.notify(destination.channel, destination.thread_ts, text, asking.lang)
        else:
            log.warning("answering record again in %s failed: %s", destination.channel, failed.message)

    async def _broke(
        self, asking: _Asking, reply: AnswerReply | None, record: Record | None, destination: Destination
    ) -> None:
        """The handler or the pipeline's stream raised: show how the record ended (the pipeline marks it
        interrupted when its stream closes), or a generic error when nothing says more."""
        internal = [notice_message(t("internal_error", asking.lang))]
        if reply is not None and record is not None:
            ended = await self.reads.get_record(record.id) or record
            await reply.finish(
                ended, internal if ended.status == RecordStatus.PENDING else final_messages(ended)
            )
        elif asking.message is not None and await self.intake.claim_message(asking.message, asking.event_id):
            await self.notify(
                destination.channel, destination.thread_ts, t("internal_error", asking.lang), asking.lang
            )

    def _new_reply(
        self, tracked: Tracked, destination: Destination, *, placeholder: str | None
    ) -> AnswerReply:
        """A streamed reply where the workspace streams and a new message is due; else edit in place."""

        def edited(view: ProgressView | None = None) -> LiveReply:
            return LiveReply(
                self.outbox,
                tracked,
                destination,
                min_edit_interval=self.options.min_edit_interval,
                placeholder_ts=placeholder,
                view=view,
            )

        recipient = recipient_of(tracked.record)
        if placeholder is not None or recipient is None or not self.streaming.native_for(recipient[0]):
            return edited()
        return NativeReply(
            self.outbox,
            tracked,
            destination,
            recipient=recipient,
            support=self.streaming,
            budget=self.stream_budget,
            min_interval=self.options.stream_interval,
            fallback=edited,
        )

    # ---------- records finished elsewhere
    async def redeliver(self, tracked: Tracked) -> Tracked | None:
        """Show a finished record's final messages, from wherever its delivery stands (the re-deliverer),
        once a reply a crash left unrecorded is found; an interrupted record is answered again instead
        when it is resumable."""
        destination = destination_of(tracked.record)
        if destination is None or tracked.record.status == RecordStatus.PENDING:
            return None
        found = await self.lost.recover(tracked, destination)
        if isinstance(found, CallFailure):  # the thread could not be read: nothing is shown before it is
            attempted = replace(tracked.delivery, attempts=tracked.delivery.attempts + 1)
            return await self.outbox.retry_later(tracked, attempted, found)
        if self.resumable(found):
            await self._answer_again(found)
            return found
        try:
            return await self.outbox.deliver(found, final_messages(found.record), destination)
        except CALL_ERRORS:  # pragma: no cover - the outbox maps every call failure
            log.exception("re-delivering record %s failed", tracked.record.id)
            return None

    async def correct(self, records: list[Record]) -> None:
        """Records just marked interrupted (crash leftovers, a sweep): answer them again (in the
        background), or tell their users when they are not resumable."""
        for record in records:
            delivery = await self.ledger.read_delivery(record.id)
            if delivery is None or destination_of(record) is None:
                continue  # not a Slack question (the CLI shares the database)
            await self.redeliver(Tracked(record, delivery))

    # ---------- status line
    async def _set_status(self, destination: Destination, status: str) -> None:
        """assistant.threads.setStatus; it may fail outside assistant threads, which is fine."""
        with contextlib.suppress(*CALL_ERRORS):
            await self.client.assistant_threads_setStatus(
                channel_id=destination.channel, thread_ts=destination.thread_ts, status=status
            )

    def _in_background(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def drain_background(self) -> None:
        """Wait for status updates and resumed answers still in flight."""
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)

    def cancel_background(self) -> None:
        for task in list(self._background):
            task.cancel()

    async def stop_background(self) -> None:
        """Cancel status updates and answers in the background, and wait until they have ended."""
        tasks = list(self._background)
        self.cancel_background()
        await asyncio.gather(*tasks, return_exceptions=True)
