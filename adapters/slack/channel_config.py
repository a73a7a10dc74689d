"""A channel's scope in Slack: which datasets it may search, how, and whether it needs a mention."""

from __future__ import annotations

from pydantic import BaseModel


class ChannelConfig(BaseModel):
    """Per-channel scope: which datasets it may search and how (built by bot.settings from KB_CONFIG).

    datasets None means every dataset in the knowledge base (what the CLI searches); [] means none, so the
    bot says no knowledge base is configured there.
    """

    datasets: list[str] | None = None
    retrieval_mode: str | None = None
    search_mode: str | None = None
    mention_only: bool = False
