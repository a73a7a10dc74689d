"""Commands front ends hand the pipeline: what they know about a question, never how to store it."""

from __future__ import annotations

from dataclasses import dataclass, field

from core.models import ConversationKey, ConversationScope


@dataclass(frozen=True, slots=True)
class Ask:
    """A new question in a conversation.

    scope is what this question searches (the front end resolved it: flags, the conversation's stored
    scope, a channel's configuration); the conversation keeps the scope of its first question. event_key
    makes the question idempotent: a second Ask with the same key opens no second record. asked_by names
    the person as the front end does ("slack:T1:U1"); reply_to says where a front end will deliver the
    answer (Slack: "channel:thread_ts"), None when the front end shows it itself (the terminal).
    """

    conversation: ConversationKey
    text: str
    scope: ConversationScope = field(default_factory=ConversationScope)
    event_key: str | None = None
    asked_by: str | None = None
    reply_to: str | None = None


@dataclass(frozen=True, slots=True)
class AskAgain:
    """Answer a stored question again (after an interruption, or on request): its own text, same record."""

    conversation: ConversationKey
    record_id: int
    scope: ConversationScope = field(default_factory=ConversationScope)


@dataclass(frozen=True, slots=True)
class GiveFeedback:
    """A person's verdict on an answer: "up" or "down" (the latest one per person counts)."""

    record_id: int
    person: str
    value: str


Question = Ask | AskAgain
