"""Message metadata on what the bot posts, so that its own replies can be told apart in a thread later.

A record's reply (the placeholder or first final part, and a stream once chat.stopStream ends it) carries
{"event_type": "kb_answer", "event_payload": {"record_id": N, "part": 0}}; further parts of a long answer
carry their part number; notices without a record carry "kb_notice". chat.startStream takes no metadata
(Slack's method reference lists none), so a stream still open is the bot's only unmarked message.
conversations.replies returns the metadata with include_all_metadata (adapters.slack.delivery.lost_replies).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

ANSWER_EVENT = "kb_answer"
NOTICE_EVENT = "kb_notice"
KNOWN_EVENTS = frozenset({ANSWER_EVENT, NOTICE_EVENT})


def answer_mark(record_id: int, part: int = 0) -> dict[str, Any]:
    """The metadata of a record's message (part 0: its visible reply)."""
    return {"event_type": ANSWER_EVENT, "event_payload": {"record_id": record_id, "part": part}}


def notice_mark(thread_ts: str) -> dict[str, Any]:
    """The metadata of a notice that belongs to no record."""
    return {"event_type": NOTICE_EVENT, "event_payload": {"thread_ts": thread_ts}}


@dataclass(frozen=True, slots=True)
class ThreadMessage:
    """One message of a thread as conversations.replies shows it: its ts, its author, and the bot's mark."""

    ts: str
    user: str = ""
    bot_id: str = ""
    event_type: str = ""  # "" when the message carries no metadata
    record_id: int | None = None
    part: int = 0

    @property
    def marked(self) -> bool:
        """Carries metadata this bot writes (a record's message or a notice)."""
        return self.event_type in KNOWN_EVENTS

    def reply_of(self, record_id: int) -> bool:
        """The visible reply (first part) of this record."""
        return self.event_type == ANSWER_EVENT and self.record_id == record_id and self.part == 0


def thread_message(raw: Mapping[str, Any]) -> ThreadMessage:
    """A conversations.replies message, its metadata read defensively (another app may write any)."""
    metadata = raw.get("metadata")
    event_type, record_id, part = "", None, 0
    if isinstance(metadata, Mapping):
        event_type = str(metadata.get("event_type") or "")
        payload = metadata.get("event_payload")
        if isinstance(payload, Mapping):
            record_id = _integer(payload.get("record_id"))
            part = _integer(payload.get("part")) or 0
    return ThreadMessage(
        ts=str(raw.get("ts") or ""),
        user=str(raw.get("user") or ""),
        bot_id=str(raw.get("bot_id") or ""),
        event_type=event_type,
        record_id=record_id,
        part=part,
    )


def _integer(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None
