"""Conversation references typed by a user: the full id, a short form, or a unique prefix, resolved or refused.

A conversation's id is ``source:team:channel:thread`` (``slack:T…:C…:ts``; ``cli::NAME:`` for a
terminal conversation). Accepted for it: the id itself; ``source:NAME`` (empty segments left out,
``cli:NAME``); the bare NAME or thread ts; or, from MIN_PREFIX characters on, a prefix of the id or of
the name that only one conversation has. Anything else is an error, never a new conversation.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.errors import InvalidInput, NotFound
from core.messages import phrase
from core.models import ConversationKey
from core.ports import Conversations

MIN_PREFIX = 4
MATCH_LIMIT = 10
_SHOWN = 5


def exact_forms(reference: str) -> list[str]:
    """Ids the reference spells out completely: itself when it has all four parts, else source:NAME."""
    reference = reference.strip()
    parts = reference.split(":")
    if len(parts) >= 4:
        return [reference]
    if len(parts) == 2 and all(parts):
        return [ConversationKey(source=parts[0], channel_id=parts[1]).as_id()]
    return []


def choose(reference: str, matches: Sequence[str]) -> str:
    """The one conversation a short reference names among store matches; NotFound or InvalidInput."""
    reference = reference.strip()
    exact = [
        conversation_id
        for conversation_id in matches
        if conversation_id == reference
        or reference in (ConversationKey.from_id(conversation_id).channel_id, _thread(conversation_id))
    ]
    candidates = exact or (list(matches) if len(reference) >= MIN_PREFIX else [])
    if len(candidates) == 1:
        return candidates[0]
    if not candidates:
        raise NotFound(phrase("error.no_such_conversation", reference=reference))
    shown = ", ".join(candidates[:_SHOWN]) + (", …" if len(candidates) > _SHOWN else "")
    raise InvalidInput(phrase("error.ambiguous_conversation", reference=reference, shown=shown))


def _thread(conversation_id: str) -> str:
    return ConversationKey.from_id(conversation_id).thread_ts


async def resolve_conversation(store: Conversations, reference: str) -> str:
    """The id of the existing conversation the reference names (module docstring); never creates one."""
    reference = reference.strip()
    for conversation_id in exact_forms(reference):
        found = await store.find_conversation(ConversationKey.from_id(conversation_id))
        if found is not None:
            return found
    if not reference:
        raise InvalidInput(phrase("error.empty_conversation_id"))
    if reference.count(":") >= 3:  # a whole id is exact: it never stands for a longer one
        return choose(reference, [])
    return choose(reference, await store.match_conversations(reference, limit=MATCH_LIMIT))
