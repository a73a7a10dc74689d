"""The assistant pane (Slack's split view for AI apps): suggested prompts when a pane thread starts, and
the thread's title from its first question.

Bolt's AsyncAssistant middleware routes `assistant_thread_started` here with its `set_suggested_prompts`
helper. Questions typed in the pane are `message.im` events in the pane's thread: the ordinary listeners
answer them like any thread question (the same conversation, history, compaction and trace), so no
`user_message` listener is registered and Bolt passes them on.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.delivery.slack_errors import CALL_ERRORS
from adapters.slack.inbound.channel_config import ChannelConfig
from adapters.slack.inbound.private_scopes import PrivateScopes
from adapters.slack.rendering.blocks import clip
from adapters.slack.rendering.texts import t
from adapters.slack.surfaces.catalogue import Catalogue
from adapters.slack.surfaces.suggested_prompts import suggested_prompts
from core.text import detect_language

log = logging.getLogger(__name__)

TITLE_MAX = 80
SetPrompts = Callable[..., Awaitable[Any]]


def thread_title(question: str) -> str:
    """A pane thread's title: the first question on one line, clipped."""
    return clip(" ".join(question.split()), TITLE_MAX) or "…"


class AssistantPane:
    """What the bot does for the pane beyond answering."""

    def __init__(
        self,
        client: AsyncWebClient,
        *,
        channel_config: Callable[[str], ChannelConfig],
        catalogue: Catalogue,
        private_scopes: PrivateScopes | None = None,
    ) -> None:
        self.client = client
        self.channel_config = channel_config
        self.catalogue = catalogue
        self.private_scopes = private_scopes

    async def thread_started(self, event: Mapping[str, Any], set_suggested_prompts: SetPrompts) -> None:
        """Offer up to four prompts: the pane channel's configured ones, else its documents' titles."""
        thread = event.get("assistant_thread") or {}
        channel = str(thread.get("channel_id") or "")
        config = self.channel_config(channel)
        scope = await self.catalogue.scope(config.datasets)
        if self.private_scopes is not None:  # no private channel's thread titles as someone else's prompts
            user = str(thread.get("user_id") or "")
            names = [summary.name for summary in scope]
            allowed = set(
                await self.private_scopes.datasets(names, channel_id=channel, user_id=user, is_dm=True)
            )
            scope = [summary for summary in scope if summary.name in allowed]
        prompts = suggested_prompts(config, scope)
        if not prompts:
            return
        lang = detect_language(" ".join(p["message"] for p in prompts))
        with contextlib.suppress(*CALL_ERRORS):
            await set_suggested_prompts(prompts=prompts, title=t("prompts_heading", lang))

    async def set_title(self, channel: str, thread_ts: str, question: str) -> None:
        """Name the pane thread after its first question (outside the pane Slack refuses; that is fine)."""
        try:
            await self.client.assistant_threads_setTitle(
                channel_id=channel, thread_ts=thread_ts, title=thread_title(question)
            )
        except CALL_ERRORS as exc:
            log.debug("assistant.threads.setTitle in %s failed: %s", channel, exc)
