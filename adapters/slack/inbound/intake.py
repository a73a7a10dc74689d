"""What a person's message is to the bot (a question, a thread command, a repeat, nothing), decided once.

Slack delivers one mention as an app_mention and a message event (different event ids), retries events
it thinks were missed (same event id), and several instances may each receive one of them. The shared
store decides: a message that became a record is found by its event key (channel + message ts); one
handled without a record (a thread command, a notice) is claimed by its message key in the delivery
ledger; event ids are claimed once their event became something, so a crash before that never makes
Slack's retry look like a repeat. Nothing here posts to Slack or writes a record: the result is an
Arrival for the bot to act on.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from adapters.slack.delivery.ledger import DeliveryLedger
from adapters.slack.inbound.channel_config import ChannelConfig, channel_scope
from adapters.slack.inbound.private_scopes import PrivateScopes
from adapters.slack.inbound.triggers import IncomingMessage, addressed, parse_message_event, thread_command
from adapters.slack.inbound.user_names import UserNames
from adapters.slack.pipeline_port import SlackReads
from core.models import ConversationKey, ConversationScope
from core.record import Record
from core.text import detect_language

EVENT_CLAIM = "event:"
MESSAGE_CLAIM = "message:"
MAX_ENGAGED_CACHED = 10000


@dataclass(frozen=True, slots=True)
class NewQuestion:
    """A question to answer: the message, its plain text and language, and what its channel searches."""

    message: IncomingMessage
    text: str
    lang: str
    scope: ConversationScope
    event_id: str | None


@dataclass(frozen=True, slots=True)
class ThreadCommand:
    """`@bot compact` / `@bot trace` typed in a thread (already claimed)."""

    key: ConversationKey
    command: Literal["compact", "trace"]
    user: str
    lang: str


@dataclass(frozen=True, slots=True)
class Unanswerable:
    """A question the channel cannot answer (no knowledge base there), already claimed: say why."""

    message: IncomingMessage
    lang: str


@dataclass(frozen=True, slots=True)
class Repeat:
    """A message some instance already took (a retry, the app_mention + message pair), and its record."""

    record: Record | None


Arrival = NewQuestion | ThreadCommand | Unanswerable | Repeat


class EngagedThreads:
    """Threads the bot answers in, read from the shared store; only positives are cached.

    Another instance may start answering in a thread at any moment, so "not engaged" is never
    remembered: every miss asks the store again (one indexed lookup). "Engaged" never stops being true,
    so it is safe to cache.
    """

    def __init__(self, reads: SlackReads) -> None:
        self.reads = reads
        self._known: OrderedDict[str, None] = OrderedDict()

    def remember(self, key: ConversationKey) -> None:
        """The bot is answering in this thread."""
        key_id = key.as_id()
        self._known[key_id] = None
        self._known.move_to_end(key_id)
        while len(self._known) > MAX_ENGAGED_CACHED:
            self._known.popitem(last=False)

    async def is_engaged(self, key: ConversationKey) -> bool:
        """True when the thread has a record of this bot (in this instance's cache, else in the store)."""
        if key.as_id() in self._known:
            return True
        found = await self.reads.find_conversation(key)
        if found is None or not await self.reads.list_records(found, limit=1):
            return False
        self.remember(key)
        return True


class Intake:
    """Turns an incoming Slack event into one Arrival (or None when the bot is not addressed)."""

    def __init__(
        self,
        *,
        reads: SlackReads,
        ledger: DeliveryLedger,
        names: UserNames,
        engaged: EngagedThreads,
        channel_config: Callable[[str], ChannelConfig],
        all_datasets: Callable[[], Awaitable[Sequence[str]]] | None = None,
        private_scopes: PrivateScopes | None = None,
    ) -> None:
        self.reads = reads
        self.private_scopes = private_scopes
        self.ledger = ledger
        self.names = names
        self.engaged = engaged
        self.channel_config = channel_config
        self.all_datasets = all_datasets

    async def take(
        self, event: Mapping[str, Any], *, team_id: str, bot_user_id: str, event_id: str | None
    ) -> Arrival | None:
        """Read the event, decide whether the bot is addressed, recognise a repeat in the shared store
        before any Slack call, and say what the message is: in that order, each step once."""
        message = parse_message_event(event, team_id=team_id, bot_user_id=bot_user_id)
        if message is None:
            return None
        config = self.channel_config(message.channel_id)
        if not await addressed(message, mention_only=config.mention_only, engaged=self.engaged.is_engaged):
            return None
        command = thread_command(message)
        claim = await self.ledger.find_event(EVENT_CLAIM + event_id) if event_id else None
        if claim is not None:
            return Repeat(await self.reads.get_record(claim.record_id) if claim.record_id else None)
        record = await self.reads.find_record(message.event_key)
        if record is not None or await self.ledger.find_event(MESSAGE_CLAIM + message.event_key):
            return Repeat(record)
        scope = await channel_scope(config, self.all_datasets)
        if self.private_scopes is not None:  # a private channel's synced threads stay in that channel
            scope = await self.private_scopes.scope(
                scope, channel_id=message.channel_id, user_id=message.user_id, is_dm=message.is_dm
            )
        text = await self.names.resolve(message) if command is None else message.text
        lang = detect_language(text)
        if command is None and scope.datasets:
            return NewQuestion(message, text, lang, scope, event_id)
        # Handled without a record (a thread command, no knowledge base here): claimed once, everywhere.
        if not await self.ledger.claim_event(MESSAGE_CLAIM + message.event_key):
            return None
        if event_id:
            await self.ledger.claim_event(EVENT_CLAIM + event_id)
        if command is not None:
            return ThreadCommand(message.key, command, message.user_id, lang)
        return Unanswerable(message, lang)

    async def claim_message(self, message: IncomingMessage, event_id: str | None) -> bool:
        """Take a message handled without a record (bad input answered by a notice); False if already taken."""
        if not await self.ledger.claim_event(MESSAGE_CLAIM + message.event_key):
            return False
        await self.note_event(event_id, None)
        return True

    async def note_event(self, event_id: str | None, record_id: int | None) -> None:
        """Remember that this event id became something (the record, when there is one)."""
        if event_id:
            await self.ledger.claim_event(EVENT_CLAIM + event_id, record_id=record_id)


def asker(team_id: str, user_id: str) -> str:
    """The store's name for a Slack user (records.asked_by): unique across workspaces."""
    return f"slack:{team_id}:{user_id}"


def reply_address(key: ConversationKey) -> str:
    """Where a thread's answers go (records.reply_to): "channel:thread_ts"."""
    return f"{key.channel_id}:{key.thread_ts}"


def conversation_key(record: Record) -> ConversationKey | None:
    """The Slack thread of a record, from its conversation id "slack:team:channel:thread_ts"."""
    parts = record.conversation_id.split(":")
    if len(parts) != 4 or parts[0] != "slack":
        return None
    return ConversationKey(source="slack", team_id=parts[1], channel_id=parts[2], thread_ts=parts[3])
