"""Recognising repeated deliveries in the shared store before any Slack call, and where a record lives.

Slack delivers one mention as an app_mention and a message event (different event ids), retries events
it thinks were missed (same event id), and several instances may each receive one of them. The store
decides: a message that became a record is found by its event key (channel + message ts); one handled
without a record (a thread command, a notice) is claimed by its message key; event ids are claimed once
their event became something, so a crash before that never makes Slack's retry look like a repeat.
"""

from __future__ import annotations

from adapters.slack.delivery.outbox import Destination
from adapters.slack.inbound.triggers import IncomingMessage
from adapters.slack.rendering.final_messages import record_lang
from core.models import ConversationKey, Record
from core.ports import ConversationStore

EVENT_CLAIM = "event:"
MESSAGE_CLAIM = "message:"


async def seen_before(
    store: ConversationStore, message: IncomingMessage, event_id: str | None
) -> tuple[bool, Record | None]:
    """(seen, its record): whether some instance already took this event or message (lookups only)."""
    if event_id:
        claim = await store.find_event(EVENT_CLAIM + event_id)
        if claim is not None:
            record = await store.get_record(claim.record_id) if claim.record_id else None
            return True, record
    record = await store.find_record(message.event_key)
    if record is not None:
        return True, record
    return await store.find_event(MESSAGE_CLAIM + message.event_key) is not None, None


async def claim_message(store: ConversationStore, message: IncomingMessage, event_id: str | None) -> bool:
    """Take a message handled without a record (a thread command, a notice); False if already taken."""
    if not await store.claim_event(MESSAGE_CLAIM + message.event_key):
        return False
    await claim_event(store, event_id, None)
    return True


async def claim_event(store: ConversationStore, event_id: str | None, record_id: int | None) -> None:
    """Remember that this event id became something (the record, when there is one)."""
    if event_id:
        await store.claim_event(EVENT_CLAIM + event_id, record_id=record_id)


def asker(team_id: str, user_id: str) -> str:
    """The store's name for a Slack user (records.asked_by): unique across workspaces."""
    return f"slack:{team_id}:{user_id}"


def conversation_key(record: Record) -> ConversationKey | None:
    """The Slack thread of a record, from its conversation id "slack:team:channel:thread_ts"."""
    parts = record.conversation_id.split(":")
    if len(parts) != 4 or parts[0] != "slack":
        return None
    return ConversationKey(source="slack", team_id=parts[1], channel_id=parts[2], thread_ts=parts[3])


def destination_of(record: Record) -> Destination | None:
    """Where a record's reply goes (None for records that are not Slack questions)."""
    key = conversation_key(record)
    return None if key is None else Destination(key.channel_id, key.thread_ts, record_lang(record))
