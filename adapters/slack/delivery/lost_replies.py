"""Finding a reply that a crash left unrecorded, before anything new is shown for its record.

A record's first message (a placeholder, a stream start, a first final part) is noted in the ledger before
it is sent (Delivery.starting_at), and its ts is saved when Slack answers. A process killed in between
leaves a message in the thread that no record points at: it would show "working on it" for ever (a stream
stays open until Slack closes it) beside the reply that delivering the question again posts. So before
such a record is delivered or answered again, its thread is read (conversations.replies with metadata):
the record's own marked reply (adapters.slack.delivery.reply_marks), else the bot's earliest unmarked
message after the question that no other record of the thread shows — a stream still open, which cannot
carry metadata. A stream found is stopped (chat.stopStream, with the record's mark); the message becomes
the record's visible reply (a placeholder its delivery replaces), and further marked copies are deleted,
so the thread ends with one reply. Nothing found: the note is cleared and delivery goes on as usual.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace

from adapters.slack.delivery.ledger import DeliveryState, Tracked
from adapters.slack.delivery.outbox import Destination, Outbox
from adapters.slack.delivery.reply_marks import ThreadMessage, answer_mark, thread_message
from adapters.slack.delivery.slack_errors import CALL_ERRORS, CallFailure, failure_of
from core.ports import RecordReader
from core.record import Record

log = logging.getLogger(__name__)

PAGE_SIZE = 200  # conversations.replies page (Slack's suggested maximum is 200)
MAX_PAGES = 5
OTHER_RECORDS = 100  # the thread's records whose replies are known (they are not this record's)


class LostReplies:
    """Looks for records' unrecorded replies in their threads and makes them the records' visible reply."""

    def __init__(self, outbox: Outbox, reads: RecordReader) -> None:
        self.outbox = outbox
        self.reads = reads
        self.user_id = ""
        self.bot_id = ""
        self._threads: dict[str, asyncio.Lock] = {}

    def known_as(self, user_id: str, bot_id: str) -> None:
        """The bot's identity (auth.test): only its own unmarked messages can be a lost stream."""
        self.user_id, self.bot_id = user_id, bot_id

    async def recover(self, tracked: Tracked, destination: Destination) -> Tracked | CallFailure:
        """The record with its delivery pointing at the lost reply found; with the note cleared when the
        thread has none; unchanged when no start is outstanding. The failure when the thread could not be
        read now (the caller tries again later). One thread is searched by one caller at a time, so two
        lost replies of one thread are told apart."""
        if not tracked.delivery.reply_unknown:
            return tracked
        lock = self._threads.setdefault(f"{destination.channel}:{destination.thread_ts}", asyncio.Lock())
        async with lock:
            current = await self.outbox.ledger.read_delivery(tracked.record.id)
            if current is None or not current.reply_unknown:  # settled meanwhile (another record's turn)
                return tracked if current is None else Tracked(tracked.record, current)
            tracked = Tracked(tracked.record, current)
            messages = await self._thread(destination)
            if isinstance(messages, CallFailure):
                return messages
            return await self._adopt(tracked, destination, messages)

    async def _adopt(
        self, tracked: Tracked, destination: Destination, messages: list[ThreadMessage]
    ) -> Tracked:
        record = tracked.record
        mine = sorted((m for m in messages if self._mine(m)), key=lambda m: _number(m.ts))
        copies = [m for m in mine if m.reply_of(record.id)]
        found = copies[0] if copies else await self._unmarked(record, destination, mine)
        if found is None:
            log.info("record %s: no reply of its in the thread; delivering it anew", record.id)
            return await self.outbox.save(tracked, replace(tracked.delivery, starting_at=0.0))
        if not found.marked:
            await self._stop_stream(destination, found.ts, record.id)
        for extra in copies[1:]:
            await self.outbox.delete(destination.channel, extra.ts)
        log.info("record %s: its reply %s was found in the thread and is replaced", record.id, found.ts)
        delivery = replace(
            tracked.delivery,
            state=DeliveryState.PLACEHOLDER,
            parts=0,
            error="",
            reply_ref=destination.ref(found.ts),
            starting_at=0.0,
        )
        return await self.outbox.save(tracked, delivery)

    def _mine(self, message: ThreadMessage) -> bool:
        """Posted by this bot (by its marks alone until its identity is known)."""
        if not self.bot_id and not self.user_id:
            return message.marked
        return bool(
            (self.bot_id and message.bot_id == self.bot_id) or (self.user_id and message.user == self.user_id)
        )

    async def _unmarked(
        self, record: Record, destination: Destination, mine: list[ThreadMessage]
    ) -> ThreadMessage | None:
        """The bot's earliest unmarked message after the question that no other record shows."""
        after = _number(_question_ts(record) or destination.thread_ts)
        claimed = await self._claimed(record)
        for message in mine:
            if not message.marked and message.ts not in claimed and _number(message.ts) > after:
                return message
        return None

    async def _claimed(self, record: Record) -> set[str]:
        """The visible replies of the thread's other records."""
        claimed: set[str] = set()
        for other in await self.reads.list_records(record.conversation_id, limit=OTHER_RECORDS):
            if other.id == record.id:
                continue
            delivery = await self.outbox.ledger.read_delivery(other.id)
            if delivery is not None and delivery.reply_ts is not None:
                claimed.add(delivery.reply_ts)
        return claimed

    async def _thread(self, destination: Destination) -> list[ThreadMessage] | CallFailure:
        """The thread's messages with their metadata (none when the thread is gone); the failure when
        reading it failed for now."""
        found: list[ThreadMessage] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):
            try:
                response = await self.outbox.client.conversations_replies(
                    channel=destination.channel,
                    ts=destination.thread_ts,
                    include_all_metadata=True,
                    limit=PAGE_SIZE,
                    cursor=cursor,
                )
            except CALL_ERRORS as exc:
                failure = failure_of(exc)
                self.outbox.failures.append(failure)
                log.warning(
                    "reading thread %s for a lost reply failed (%s)", destination.thread_ts, failure.code
                )
                return failure if failure.transient else found
            found += [thread_message(raw) for raw in response.get("messages") or []]
            cursor = str((response.get("response_metadata") or {}).get("next_cursor") or "") or None
            if cursor is None:
                break
        return found

    async def _stop_stream(self, destination: Destination, ts: str, record_id: int) -> None:
        """End a stream left open (marking it as the record's); a message that is no stream refuses, and
        the delivery's chat.update replaces it either way."""
        try:
            await self.outbox.client.chat_stopStream(
                channel=destination.channel, ts=ts, metadata=answer_mark(record_id)
            )
        except CALL_ERRORS as exc:
            log.info("stopping the lost stream %s: %s", ts, failure_of(exc).code)


def _question_ts(record: Record) -> str | None:
    """The ts of the message that asked, from the event key "slack:team:channel:ts"."""
    parts = (record.event_key or "").split(":")
    return parts[3] if len(parts) == 4 and parts[0] == "slack" else None


def _number(ts: str) -> float:
    try:
        return float(ts)
    except ValueError:
        return 0.0
