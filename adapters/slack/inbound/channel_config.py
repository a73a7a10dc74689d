"""A channel's scope in Slack: which datasets it may search, how, whether it needs a mention, and the
prompts the assistant pane suggests there."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from pydantic import BaseModel, field_validator

from core.models import RETRIEVAL_MODES, SEARCH_MODES, ConversationScope


class SuggestedPrompt(BaseModel):
    """One suggested prompt of the assistant pane: the button's title and the message it sends."""

    title: str
    message: str


class ChannelConfig(BaseModel):
    """Per-channel scope: which datasets it may search and how (built by bot.settings from KB_CONFIG).

    datasets None means every dataset in the knowledge base (what the CLI searches); [] means none, so the
    bot says no knowledge base is configured there. suggested_prompts None means prompts made from the
    titles of the channel's documents; a prompt may be written as a table or as one string (title and
    message alike).
    """

    datasets: list[str] | None = None
    retrieval_mode: str | None = None
    search_mode: str | None = None
    mention_only: bool = False
    suggested_prompts: list[SuggestedPrompt] | None = None

    @field_validator("suggested_prompts", mode="before")
    @classmethod
    def _prompts(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"title": item, "message": item} if isinstance(item, str) else item for item in value]
        return value


async def channel_scope(
    config: ChannelConfig, all_datasets: Callable[[], Awaitable[Sequence[str]]] | None
) -> ConversationScope:
    """What a channel searches: its own datasets, or every dataset when it names none, and the modes it
    names (an unknown mode is the configured default)."""
    if config.datasets is not None:
        datasets = tuple(config.datasets)
    else:
        datasets = tuple(await all_datasets()) if all_datasets is not None else ()
    search = config.search_mode if config.search_mode in SEARCH_MODES else None
    retrieval = config.retrieval_mode if config.retrieval_mode in RETRIEVAL_MODES else None
    return ConversationScope(datasets, search_mode=search, retrieval_mode=retrieval)
