"""Which conversation a command works on, and what it searches: ids, names, the stored scope, datasets.

Every command that takes a conversation resolves it with core.conversation.references (the full id
printed by `kb ask`, `kb chat` and `kb demo`, or a short form); an unknown one is an error. A new
conversation is started without a reference, or by name with --name. A conversation's scope (datasets,
search and retrieval modes) is stored by the pipeline with its first question; later questions default to it, flags win
for the question they are given with. Every dataset is checked before anything is stored.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bot.cli.texts import phrase
from core.conversation.references import resolve_conversation
from core.errors import InvalidInput, NotFound
from core.models import ConversationKey, ConversationScope, RetrievalMode, SearchMode
from core.ports import ConversationStore

CLI_SOURCE = "cli"


@dataclass(frozen=True, slots=True)
class Conversation:
    """A conversation a command is about to use: its key and id, whether it is new, its stored scope."""

    key: ConversationKey
    stored_scope: ConversationScope | None = None
    is_new: bool = True

    @property
    def id(self) -> str:
        return self.key.as_id()


def new_conversation(source: str = CLI_SOURCE, name: str | None = None) -> Conversation:
    """A conversation not stored yet: named, or with a fresh random name."""
    return Conversation(ConversationKey(source=source, channel_id=name or uuid.uuid4().hex[:12]))


async def existing_conversation(store: ConversationStore, reference: str) -> Conversation:
    """The conversation a reference names (NotFound / InvalidInput otherwise), with its stored scope."""
    conversation_id = await resolve_conversation(store, reference)
    scope = await store.read_scope(conversation_id)
    return Conversation(ConversationKey.from_id(conversation_id), scope, is_new=False)


async def named_conversation(store: ConversationStore, name: str) -> Conversation:
    """--name NAME: the terminal conversation of that name, continued if it exists, else started."""
    name = name.strip()
    if not name or ":" in name:
        raise InvalidInput(phrase("error.bad_conversation_name"))
    key = ConversationKey(source=CLI_SOURCE, channel_id=name)
    found = await store.find_conversation(key)
    if found is None:
        return Conversation(key)
    return Conversation(key, await store.read_scope(found), is_new=False)


async def choose_conversation(
    store: ConversationStore, *, reference: str | None, name: str | None
) -> Conversation:
    """--conversation REF (must exist), --name NAME (continue or start), or a new conversation."""
    if reference and name:
        raise InvalidInput(phrase("error.conversation_and_name"))
    if reference:
        return await existing_conversation(store, reference)
    if name:
        return await named_conversation(store, name)
    return new_conversation()


def unknown_datasets_error(unknown: Sequence[str], known: Sequence[str]) -> NotFound:
    """The message every command gives for datasets that do not exist, with the existing ones."""
    available = ", ".join(sorted(known)) or "-"
    return NotFound(phrase("error.no_such_dataset", unknown=", ".join(unknown), available=available))


async def check_datasets(kb: Any, names: Sequence[str]) -> None:
    """NotFound (unknown_datasets_error) unless every name is an existing dataset."""
    known = await kb.list_datasets()
    unknown = [name for name in names if name not in set(known)]
    if unknown:
        raise unknown_datasets_error(unknown, known)


def no_datasets_error() -> NotFound:
    return NotFound(phrase("error.no_dataset_yet"))


async def question_scope(
    kb: Any,
    conversation: Conversation,
    *,
    datasets: Sequence[str],
    search_mode: SearchMode | None,
    retrieval_mode: RetrievalMode | None,
    default_datasets: Sequence[str],
) -> ConversationScope:
    """What this question searches: flags, else the conversation's stored scope, else the defaults
    (KB_DATASETS, else every dataset). Raises NotFound for an unknown dataset or when there is none."""
    stored = conversation.stored_scope or ConversationScope()
    chosen = tuple(dict.fromkeys(name.strip() for name in datasets if name.strip()))
    if not chosen:
        chosen = stored.datasets or tuple(default_datasets) or tuple(await kb.list_datasets())
    if not chosen:
        raise no_datasets_error()
    await check_datasets(kb, chosen)
    return ConversationScope(
        datasets=chosen,
        search_mode=search_mode or stored.search_mode,
        retrieval_mode=retrieval_mode or stored.retrieval_mode,
    )
