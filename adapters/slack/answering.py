"""One question, answered in its Slack thread: stored first, then placeholder, phase edits, final delivery.

Nothing is posted before the question's record exists (idempotent on the message's event key), so a
failed post never loses a question: the record knows what it still has to show, and the outbox or the
re-deliverer shows it. Duplicates are recognised before (adapters.slack.inbound.intake); a repeat of an
interrupted question gets its corrected message.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import replace
from typing import Any, Protocol

from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.delivery.outbox import Destination, Outbox, placeholder_ts
from adapters.slack.delivery.slack_errors import CALL_ERRORS
from adapters.slack.delivery.update_budget import UpdateBudget
from adapters.slack.inbound.channel_config import ChannelConfig
from adapters.slack.inbound.intake import asker, claim_event, claim_message, conversation_key, destination_of
from adapters.slack.inbound.threads import EngagedThreads
from adapters.slack.inbound.triggers import IncomingMessage
from adapters.slack.inbound.user_names import UserNames
from adapters.slack.pipeline_port import AnswerPipeline
from adapters.slack.rendering.blocks import SlackMessage
from adapters.slack.rendering.final_messages import (
    answer_messages,
    final_messages,
    notice_message,
    record_lang,
)
from adapters.slack.rendering.progress_line import ProgressView
from adapters.slack.rendering.texts import failure_text, t
from adapters.slack.reply.edited_reply import LiveReply
from adapters.slack.reply.streamed_reply import NativeReply
from adapters.slack.reply.streaming_support import StreamingSupport
from core.errors import InvalidInput
from core.events import Done, Failed, Progress
from core.models import (
    ConversationKey,
    Delivery,
    DeliveryState,
    Question,
    Record,
    RecordStatus,
    RetrievalMode,
    SearchMode,
)
from core.ports import ConversationStore

log = logging.getLogger(__name__)
DEFAULT_STREAM_INTERVAL = 0.5  # seconds between appends to one stream (Slack suggests 0.5-1 s)


class AnswerReply(Protocol):
    """The Slack side of one answer in flight: edited in place (LiveReply) or streamed (NativeReply)."""

    destination: Destination

    def begin(self, *, queued_behind: int = 0) -> None:
        """Show that the question is being worked on (returns at once)."""
        ...

    def progress(self, event: Progress) -> None:
        """Fold a pipeline event into what the reply shows (never blocks)."""
        ...

    async def finish(self, record: Record, messages: list[SlackMessage]) -> Record:
        """Make the final messages the record's visible reply; the record with its delivery state."""
        ...

    async def close(self) -> None:
        """Stop sending anything more for this answer."""
        ...


def recipient_of(record: Record) -> tuple[str, str] | None:
    """(team id, user id) of the person who asked, from records.asked_by "slack:T:U"."""
    parts = (record.asked_by or "").split(":")
    if len(parts) != 3 or parts[0] != "slack" or not parts[1] or not parts[2]:
        return None
    return parts[1], parts[2]


class Answerer:
    """Runs questions through the pipeline and keeps their thread replies up to date."""

    def __init__(
        self,
        client: AsyncWebClient,
        pipeline: AnswerPipeline,
        *,
        outbox: Outbox,
        engaged: EngagedThreads,
        channel_config: Callable[[str], ChannelConfig],
        min_edit_interval: float,
        resume_interrupted: bool = False,
        all_datasets: Callable[[], Awaitable[Sequence[str]]] | None = None,
        streaming: StreamingSupport | None = None,
        stream_budget: UpdateBudget | None = None,
        stream_interval: float = DEFAULT_STREAM_INTERVAL,
        on_first_in_dm_thread: Callable[[str, str, str], Coroutine[Any, Any, None]] | None = None,
    ) -> None:
        self.on_first_in_dm_thread = on_first_in_dm_thread  # (channel, thread_ts, question): the pane's title
        self.client = client
        self.streaming = streaming or StreamingSupport("edit")
        self.stream_budget = stream_budget or UpdateBudget(limit=90, reserve=0)
        self.stream_interval = stream_interval
        self.pipeline = pipeline
        self.outbox = outbox
        self.engaged = engaged
        self.channel_config = channel_config
        self.min_edit_interval = min_edit_interval
        self.resume_interrupted = resume_interrupted
        self.all_datasets = all_datasets
        self.names = UserNames(client)
        self.in_flight: dict[int, AnswerReply] = {}
        self._active: dict[str, int] = {}
        self._turns: dict[str, asyncio.Event] = {}
        self._background: set[asyncio.Task[None]] = set()

    @property
    def store(self) -> ConversationStore:
        return self.pipeline.store

    # ---------- duplicates
    async def on_duplicate(self, record: Record | None) -> None:
        """A repeated delivery: silence, except that an interrupted question gets its corrected message."""
        if record is None or record.status != RecordStatus.INTERRUPTED or record.delivery is None:
            return
        if self.resume_interrupted:
            await self.resume(record)
        elif record.delivery.state != DeliveryState.DELIVERED:
            taken = await self.store.take_due_deliveries(
                time.time(), lease=self.outbox.options.lease, settle=0.0, record_id=record.id
            )
            for due in taken:
                await self.redeliver(due)

    # ---------- answering
    async def scope(self, config: ChannelConfig) -> tuple[str, ...]:
        """The datasets a channel searches: its own list, or every dataset when it has none (datasets None)."""
        if config.datasets is not None:
            return tuple(config.datasets)
        return tuple(await self.all_datasets()) if self.all_datasets is not None else ()

    async def notify(self, channel: str, thread_ts: str, text: str, lang: str) -> None:
        """A one-off notice in the thread (no record), paced like every post."""
        await self.outbox.post(Destination(channel, thread_ts, lang), lambda: notice_message(text))

    async def answer(
        self,
        message: IncomingMessage,
        *,
        lang: str,
        config: ChannelConfig,
        bot_user_id: str,
        event_id: str | None = None,
    ) -> None:
        """Store the question, then answer it in its thread; every outcome ends in a delivered final message."""
        text = await self.names.plain_text(message.raw_text, bot_user_id=bot_user_id)
        conversation_id = await self.store.ensure_conversation(message.key)
        due = time.time() + self.outbox.options.lease
        try:
            record, created = await self.store.add_question(
                conversation_id,
                text,
                event_key=message.event_key,
                delivery=Delivery(due=due),
                asked_by=asker(message.team_id, message.user_id),
            )
        except InvalidInput as exc:
            if await claim_message(self.store, message, event_id):
                await self.notify(
                    message.channel_id, message.thread_ts, t("failed", lang, message=exc.message(lang)), lang
                )
            return
        if not created:
            await self.on_duplicate(record)
            return
        await claim_event(self.store, event_id, record.id)
        self.engaged.remember(message.key)
        if (
            self.on_first_in_dm_thread is not None
            and message.is_dm
            and message.in_thread
            and len(await self.store.list_records(conversation_id, limit=2)) == 1  # the thread's first
        ):
            self._in_background(self.on_first_in_dm_thread(message.channel_id, message.thread_ts, text))
        await self._answer_record(record, message.key, config, lang, question_text=text)

    async def resume(self, record: Record) -> None:
        """Answer an interrupted record again, in place of its placeholder (KB_RESUME_INTERRUPTED)."""
        key = conversation_key(record)
        if key is None or record.id in self.in_flight:
            return
        config = self.channel_config(key.channel_id)
        await self._answer_record(
            record, key, config, record_lang(record), question_text=record.question, again=True
        )

    async def _answer_record(
        self,
        record: Record,
        key: ConversationKey,
        config: ChannelConfig,
        lang: str,
        *,
        question_text: str,
        again: bool = False,
    ) -> None:
        """Questions of one thread reach the pipeline in arrival order: each waits until the previous one has
        entered the pipeline (holding or queued on the conversation lock) before asking."""
        key_id = key.as_id()
        ahead = self._active.get(key_id, 0)
        self._active[key_id] = ahead + 1
        previous, entered = self._turns.get(key_id), asyncio.Event()
        self._turns[key_id] = entered
        destination = Destination(key.channel_id, key.thread_ts, lang)
        shown = placeholder_ts(record) if again else None
        if shown is not None and record.delivery is not None:  # its visible reply becomes the placeholder
            record = await self.outbox.save(
                record, replace(record.delivery, state=DeliveryState.PLACEHOLDER, parts=0, error="")
            )
        reply = self._new_reply(record, destination, placeholder=shown)
        self.in_flight[record.id] = reply
        try:
            reply.begin(queued_behind=ahead)
            self._in_background(self._set_status(destination, t("status", lang)))
            question = Question(
                conversation=key,
                text=question_text,
                datasets=await self.scope(config),
                event_key=record.event_key,
                record_id=None if again else record.id,
                re_chat_record_id=record.id if again else None,
                retrieval_mode=_retrieval_mode(config.retrieval_mode),
                search_mode=_search_mode(config.search_mode),
            )
            if previous is not None:
                await previous.wait()
            await self._run(question, record, reply, entered)
        finally:
            entered.set()
            if self._turns.get(key_id) is entered:
                del self._turns[key_id]
            self._active[key_id] -= 1
            if not self._active[key_id]:
                del self._active[key_id]
            self.in_flight.pop(record.id, None)
            await reply.close()

    def _new_reply(self, record: Record, destination: Destination, *, placeholder: str | None) -> AnswerReply:
        """A streamed reply where the workspace streams and a new message is due; else edit in place."""

        def edited(view: ProgressView | None = None) -> LiveReply:
            return LiveReply(
                self.outbox,
                record,
                destination,
                min_edit_interval=self.min_edit_interval,
                placeholder_ts=placeholder,
                view=view,
            )

        recipient = recipient_of(record)
        if placeholder is not None or recipient is None or not self.streaming.native_for(recipient[0]):
            return edited()
        return NativeReply(
            self.outbox,
            record,
            destination,
            recipient=recipient,
            support=self.streaming,
            budget=self.stream_budget,
            min_interval=self.stream_interval,
            fallback=edited,
        )

    async def _run(
        self, question: Question, record: Record, reply: AnswerReply, entered: asyncio.Event
    ) -> None:
        try:
            async with contextlib.aclosing(self.pipeline.ask(question)) as events:  # type: ignore[type-var]
                async for event in events:
                    entered.set()
                    if isinstance(event, Done):
                        await reply.finish(event.record, answer_messages(event.record))
                        return
                    if isinstance(event, Failed):
                        await self._fail(record, reply, event, question.text)
                        return
                    reply.progress(event)
            log.error("the pipeline ended without a final event for record %s", record.id)
            await self._give_up(record, reply, "internal: no final event")
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("answering record %s failed", record.id)
            await self._give_up(record, reply, "internal: the Slack handler failed")
        finally:
            self._in_background(self._set_status(reply.destination, ""))

    async def _fail(self, record: Record, reply: AnswerReply, failed: Failed, text: str) -> None:
        current = failed.record or await self.store.get_record(record.id) or record
        if current.status == RecordStatus.PENDING:  # a failure the pipeline did not record
            current = await self.store.fail_record(
                record.id, status=RecordStatus.FAILED, reason=f"{failed.code}: {failed.message}"
            )
        if failed.code == "duplicate" or current.status == RecordStatus.ANSWERED:
            await reply.finish(current, final_messages(current))  # finished elsewhere: show how it ended
            return
        lang = record_lang(current, text)
        reason = failure_text(failed.code, failed.message, failed.details, lang)
        await self.store.update_details(current.id, {"user_message": reason})
        current = replace(current, details={**current.details, "user_message": reason})
        await reply.finish(current, final_messages(current))

    async def _give_up(self, record: Record, reply: AnswerReply, reason: str) -> None:
        current = await self.store.fail_record(record.id, status=RecordStatus.FAILED, reason=reason)
        await reply.finish(current, final_messages(current))

    # ---------- records finished elsewhere
    async def redeliver(self, record: Record) -> Record | None:
        """Show a finished record's final messages, from wherever its delivery stands (the re-deliverer)."""
        destination = destination_of(record)
        if destination is None or record.status == RecordStatus.PENDING:
            return None
        try:
            return await self.outbox.deliver(record, final_messages(record), destination)
        except CALL_ERRORS:  # pragma: no cover - the outbox maps every call failure
            log.exception("re-delivering record %s failed", record.id)
            return None

    async def correct(self, records: list[Record]) -> None:
        """Records just marked interrupted (crash leftovers, a sweep, shutdown): tell their users, or answer
        them again when resuming is on."""
        for record in records:
            if record.delivery is None or destination_of(record) is None:
                continue  # not a Slack question (the CLI shares the database)
            if self.resume_interrupted and record.status == RecordStatus.INTERRUPTED:
                self._in_background(self.resume(record))
            else:
                await self.redeliver(record)

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


def _retrieval_mode(value: str | None) -> RetrievalMode | None:
    return value if value in ("auto", "single", "multi") else None  # type: ignore[return-value]


def _search_mode(value: str | None) -> SearchMode | None:
    return value if value in ("embedding", "keywords", "blend") else None  # type: ignore[return-value]
