"""A channel's scope in Slack: which datasets it may search, how, and whether it needs a mention."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ChannelConfig(BaseModel):
    """Per-channel scope: which datasets it may search and how (built by bot.settings from KB_CONFIG)."""

    datasets: list[str] = Field(default_factory=list)
    retrieval_mode: str | None = None
    search_mode: str | None = None
    mention_only: bool = False
