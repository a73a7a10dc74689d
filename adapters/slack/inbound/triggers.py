"""Which Slack message events are questions, thread commands, or nothing for the bot (pure decisions)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from adapters.slack.inbound.plain_text import mentioned_user_ids, to_plain_text
from core.models import ConversationKey

# Subtypes that are still a person writing a message; edits, deletions, joins and the rest are ignored.
ANSWERABLE_SUBTYPES = frozenset({"", "file_share", "thread_broadcast"})
COMMAND_WORDS: dict[str, Literal["compact", "trace"]] = {
    "compact": "compact",
    "/compact": "compact",
    "压缩": "compact",
    "trace": "trace",
    "/trace": "trace",
    "轨迹": "trace",
    "检索轨迹": "trace",
}
SLACKBOT = "USLACKBOT"


@dataclass(frozen=True, slots=True)
class BotIdentity:
    """Who the bot is in the workspace (from auth.test)."""

    team_id: str
    user_id: str
    bot_id: str


@dataclass(frozen=True, slots=True)
class IncomingMessage:
    """A person's message that reached the bot, in a channel thread or a DM."""

    team_id: str
    channel_id: str
    user_id: str
    ts: str
    thread_ts: str
    raw_text: str
    is_dm: bool
    mentions_bot: bool
    text: str = ""  # the plain text, the bot's mention removed and others' mentions as "@U123" (see names)
    mentioned: tuple[str, ...] = ()  # the other users it mentions (their names replace "@U123" in text)

    @property
    def key(self) -> ConversationKey:
        """The conversation: team + channel + thread root."""
        return ConversationKey(
            source="slack", team_id=self.team_id, channel_id=self.channel_id, thread_ts=self.thread_ts
        )

    @property
    def event_key(self) -> str:
        """The idempotency key shared by the app_mention and message deliveries of this message."""
        return f"slack:{self.team_id}:{self.channel_id}:{self.ts}"

    @property
    def in_thread(self) -> bool:
        """True for a reply inside an existing thread (not the thread's root)."""
        return self.thread_ts != self.ts


def parse_message_event(
    event: Mapping[str, Any], *, team_id: str, bot_user_id: str
) -> IncomingMessage | None:
    """The message, or None when the bot must ignore the event (bots, itself, edits, deletions, joins...)."""
    subtype = str(event.get("subtype") or "")
    if subtype not in ANSWERABLE_SUBTYPES or event.get("hidden"):
        return None
    user = str(event.get("user") or "")
    if not user or user in (bot_user_id, SLACKBOT) or event.get("bot_id") or event.get("bot_profile"):
        return None
    channel, ts = str(event.get("channel") or ""), str(event.get("ts") or "")
    if not channel or not ts:
        return None
    raw = str(event.get("text") or "")
    channel_type = str(event.get("channel_type") or "")
    mentioned = mentioned_user_ids(raw)
    others = tuple(user_id for user_id in mentioned if user_id != bot_user_id)
    return IncomingMessage(
        team_id=str(event.get("team") or team_id),
        channel_id=channel,
        user_id=user,
        ts=ts,
        thread_ts=str(event.get("thread_ts") or ts),
        raw_text=raw,
        is_dm=channel_type == "im" or (not channel_type and channel.startswith("D")),
        mentions_bot=event.get("type") == "app_mention" or (bool(bot_user_id) and bot_user_id in mentioned),
        # made plain once; names are looked up only for questions (adapters.slack.inbound.user_names)
        text=to_plain_text(raw, bot_user_id=bot_user_id, user_names={user_id: user_id for user_id in others}),
        mentioned=others,
    )


def thread_command(message: IncomingMessage) -> Literal["compact", "trace"] | None:
    """ "@bot compact" / "@bot trace" (and their Chinese forms) as the whole message, to the bot directly."""
    if not (message.mentions_bot or message.is_dm):
        return None
    return COMMAND_WORDS.get(message.text.strip().lower().rstrip("。.!！"))


def should_answer(message: IncomingMessage, *, thread_engaged: bool, mention_only: bool) -> bool:
    """Mentions and DMs always; replies in a thread the bot answered in, unless the channel is mention-only."""
    if message.mentions_bot or message.is_dm:
        return True
    return message.in_thread and thread_engaged and not mention_only


async def addressed(
    message: IncomingMessage, *, mention_only: bool, engaged: Callable[[ConversationKey], Awaitable[bool]]
) -> bool:
    """should_answer, asking whether the thread is engaged only when that decides it (a store read)."""
    if message.mentions_bot or message.is_dm:
        return True
    if not message.in_thread or mention_only:
        return False
    return should_answer(message, thread_engaged=await engaged(message.key), mention_only=mention_only)
