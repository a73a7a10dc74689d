"""The `/kb` slash command: help, this channel's settings, and `compact|trace <permalink>`.

Slash commands cannot be used inside threads and carry no thread id, so thread actions take a pasted
permalink; the requester must be able to see the linked conversation (see adapters/slack/inbound/access.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.inbound.access import can_user_see
from adapters.slack.inbound.channel_config import ChannelConfig
from adapters.slack.rendering.blocks import SlackMessage, section
from adapters.slack.rendering.texts import t
from adapters.slack.surfaces.permalinks import parse_permalink
from adapters.slack.surfaces.thread_actions import ThreadActions, plain
from core.models import ConversationKey
from core.text import detect_language


@dataclass(frozen=True, slots=True)
class SlashRequest:
    """The parts of a `/kb` invocation the bot uses."""

    team_id: str
    channel_id: str
    user_id: str
    text: str
    trigger_id: str


def settings_text(channel_id: str, config: ChannelConfig, lang: str) -> str:
    """This channel's scope, as configured."""
    if config.datasets is None:
        datasets = t("settings.every_dataset", lang)
    else:
        datasets = ", ".join(config.datasets) or t("settings.no_dataset", lang)
    default = t("settings.default", lang)
    return t(
        "settings.reply",
        lang,
        channel_id=channel_id,
        datasets=datasets,
        retrieval_mode=config.retrieval_mode or default,
        search_mode=config.search_mode or default,
        mention_only=t("settings.yes" if config.mention_only else "settings.no", lang),
    )


async def handle_slash(
    request: SlashRequest,
    *,
    client: AsyncWebClient,
    thread_actions: ThreadActions,
    channel_config: Callable[[str], ChannelConfig],
) -> SlackMessage | None:
    """The private reply to a `/kb` command (None when a modal was opened instead)."""
    verb, _, rest = request.text.strip().partition(" ")
    verb = verb.lower()
    lang = detect_language(request.text) if request.text.strip() else "en"
    if verb in ("", "help", "帮助"):
        return SlackMessage(text="/kb help", blocks=[section(t("help", lang))])
    if verb in ("settings", "config", "设置"):
        text = settings_text(request.channel_id, channel_config(request.channel_id), lang)
        return SlackMessage(text=text[:300], blocks=[section(text)])
    if verb not in ("compact", "trace", "压缩", "轨迹"):
        return SlackMessage(text="/kb help", blocks=[section(t("help", lang))])
    link = parse_permalink(rest)
    if link is None:
        return plain(t("bad_permalink", lang))
    if not await can_user_see(client, user_id=request.user_id, channel_id=link.channel_id):
        return plain(t("not_visible", lang))
    key = ConversationKey(
        source="slack", team_id=request.team_id, channel_id=link.channel_id, thread_ts=link.thread_ts
    )
    lang = await thread_actions.thread_lang(key, lang)
    if verb in ("compact", "压缩"):
        return plain(await thread_actions.compact(key, lang))
    record = await thread_actions.record_for(key, message_ts=link.message_ts)
    if record is None:
        return plain(t("no_answer_here", lang))
    if await thread_actions.open_trace(request.trigger_id, record):
        return None
    return thread_actions.trace_card(record)
