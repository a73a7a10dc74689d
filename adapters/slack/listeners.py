"""Bolt listeners: thin functions that ack, read the payload, and hand the work to the bot after the ack."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol

from slack_bolt.async_app import AsyncApp, AsyncAssistant
from slack_bolt.response import BoltResponse
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.answering import Answerer
from adapters.slack.inbound.channel_config import ChannelConfig
from adapters.slack.inbound.intake import claim_message, seen_before
from adapters.slack.inbound.plain_text import to_plain_text
from adapters.slack.inbound.threads import EngagedThreads
from adapters.slack.inbound.triggers import (
    BotIdentity,
    IncomingMessage,
    parse_message_event,
    should_answer,
    thread_command,
)
from adapters.slack.pipeline_port import AnswerPipeline
from adapters.slack.rendering.final_messages import (
    FEEDBACK,
    FEEDBACK_DOWN,
    FEEDBACK_UP,
    SHOW_TRACE,
    feedback_value,
)
from adapters.slack.rendering.texts import t
from adapters.slack.surfaces.assistant_pane import AssistantPane, SetPrompts
from adapters.slack.surfaces.home_publisher import HomeTab
from adapters.slack.surfaces.slash_command import SlashRequest, handle_slash
from adapters.slack.surfaces.thread_actions import ThreadActions, plain
from adapters.slack.surfaces.trace_modal import PAGE_ACTION_PREFIX
from core.models import ConversationKey
from core.text import detect_language

log = logging.getLogger(__name__)

COMPACT_SHORTCUT = "compact_thread"
TRACE_SHORTCUT = "show_trace"
Ack = Callable[..., Awaitable[None]]


class ListenerHost(Protocol):
    """What the listeners need of the running bot (adapters.slack.app.ListenerHost provides it)."""

    client: AsyncWebClient
    pipeline: AnswerPipeline
    channel_config: Callable[[str], ChannelConfig]
    identity: BotIdentity | None
    closing: bool
    engaged: EngagedThreads
    answerer: Answerer
    thread_actions: ThreadActions
    pane: AssistantPane
    home: HomeTab

    def spawn(self, coroutine: Coroutine[Any, Any, None], *, name: str = "") -> asyncio.Task[None]:
        """Run work after the ack."""
        ...


def _identity(bot: ListenerHost, context: dict[str, Any], body: dict[str, Any]) -> tuple[str, str]:
    """(team id, bot user id), from auth.test at start or from Bolt's per-request context."""
    if bot.identity is not None:
        return body.get("team_id") or bot.identity.team_id, bot.identity.user_id
    return body.get("team_id") or context.get("team_id") or "", context.get("bot_user_id") or ""


def register_listeners(app: AsyncApp, bot: ListenerHost) -> None:
    """Attach every listener of the bot to the Bolt app."""

    async def refuse_while_closing(
        body: dict[str, Any], resp: BoltResponse, next: Callable[[], Awaitable[None]]
    ) -> BoltResponse:
        if body.get("type") == "event_callback" and bot.closing:
            return BoltResponse(status=503, body="")  # shutting down: Slack redelivers it later
        await next()
        return resp

    app.middleware(refuse_while_closing)

    async def on_message(body: dict[str, Any], event: dict[str, Any], context: dict[str, Any]) -> None:
        if bot.closing:
            return
        team_id, bot_user_id = _identity(bot, context, body)
        message = parse_message_event(event, team_id=team_id, bot_user_id=bot_user_id)
        if message is not None:
            event_id = str(body.get("event_id") or "") or None
            bot.spawn(_consider(bot, message, bot_user_id, event_id), name=f"message {message.event_key}")

    assistant = AsyncAssistant(logger=log)

    async def on_pane_thread_started(payload: dict[str, Any], set_suggested_prompts: SetPrompts) -> None:
        bot.spawn(bot.pane.thread_started(payload, set_suggested_prompts), name="pane thread started")

    async def on_pane_context_changed() -> None:
        """The pane answers from its own channel's scope, not the channel being viewed: nothing to keep."""

    assistant.thread_started(on_pane_thread_started)
    assistant.thread_context_changed(on_pane_context_changed)
    app.assistant(assistant)  # pane questions (message.im in the pane's thread) pass on to on_message

    app.event("app_mention")(on_message)
    app.event("message")(on_message)

    async def on_home_opened(body: dict[str, Any], event: dict[str, Any], context: dict[str, Any]) -> None:
        if event.get("tab", "home") != "home" or not event.get("user"):
            return  # the Messages tab: nothing to publish
        team_id, _ = _identity(bot, context, body)
        bot.spawn(bot.home.publish(team_id=team_id, user_id=str(event["user"])), name="home tab")

    app.event("app_home_opened")(on_home_opened)

    async def on_compact_shortcut(ack: Ack, shortcut: dict[str, Any], body: dict[str, Any]) -> None:
        await ack()
        bot.spawn(_shortcut(bot, shortcut, "compact"))

    async def on_trace_shortcut(ack: Ack, shortcut: dict[str, Any]) -> None:
        await ack()
        await _shortcut(bot, shortcut, "trace")  # inline: the trigger_id expires 3 s after the click

    app.shortcut(COMPACT_SHORTCUT)(on_compact_shortcut)
    app.shortcut(TRACE_SHORTCUT)(on_trace_shortcut)

    async def on_show_trace(ack: Ack, body: dict[str, Any], action: dict[str, Any]) -> None:
        await ack()
        record = await bot.pipeline.store.get_record(int(action.get("value") or 0))
        if record is not None:
            await bot.thread_actions.open_trace(body.get("trigger_id", ""), record)

    async def on_feedback(ack: Ack, body: dict[str, Any], action: dict[str, Any]) -> None:
        await ack()
        if action.get("action_id") == FEEDBACK:  # Slack's feedback_buttons: the value says which
            parsed = feedback_value(str(action.get("value") or ""))
            if parsed is None:
                return
            value, record_id = parsed
        else:  # the plain 👍/👎 buttons of answers posted before
            value = "up" if action.get("action_id") == FEEDBACK_UP else "down"
            record_id = int(action.get("value") or 0)
        user = (body.get("user") or {}).get("id", "")
        record = await bot.thread_actions.record_feedback(record_id, user_id=user, value=value)
        container = body.get("container") or {}
        if record is not None and container.get("channel_id"):
            lang = (
                detect_language(record.question) if "lang" not in record.details else record.details["lang"]
            )
            await bot.thread_actions.tell(
                channel=container["channel_id"],
                user=user,
                thread_ts=container.get("thread_ts") or container.get("message_ts"),
                message=plain(t("thanks_feedback", lang)),
                response_url=body.get("response_url"),
            )

    async def on_trace_page(ack: Ack, body: dict[str, Any], action: dict[str, Any]) -> None:
        await ack()
        view = body.get("view") or {}
        await bot.thread_actions.turn_page(
            view_id=view.get("id", ""), view_hash=view.get("hash"), value=action.get("value", "")
        )

    app.action(SHOW_TRACE)(on_show_trace)
    app.action(FEEDBACK)(on_feedback)
    app.action(FEEDBACK_UP)(on_feedback)
    app.action(FEEDBACK_DOWN)(on_feedback)
    app.action(re.compile(f"^{PAGE_ACTION_PREFIX}"))(on_trace_page)

    async def on_kb(ack: Ack, command: dict[str, Any], respond: Callable[..., Awaitable[Any]]) -> None:
        await ack()
        request = SlashRequest(
            team_id=command.get("team_id", ""),
            channel_id=command.get("channel_id", ""),
            user_id=command.get("user_id", ""),
            text=command.get("text", ""),
            trigger_id=command.get("trigger_id", ""),
        )
        reply = await handle_slash(
            request, client=bot.client, thread_actions=bot.thread_actions, channel_config=bot.channel_config
        )
        if reply is not None:
            await respond(text=reply.text, blocks=reply.blocks, response_type="ephemeral")

    app.command("/kb")(on_kb)


async def _consider(
    bot: ListenerHost, message: IncomingMessage, bot_user_id: str, event_id: str | None = None
) -> None:
    """Decide what a person's message is (question, thread command, nothing) and act on it once, across
    every instance: repeats are recognised in the shared store before any Slack call."""
    config = bot.channel_config(message.channel_id)
    engaged = (
        message.mentions_bot
        or message.is_dm
        or (message.in_thread and not config.mention_only and await bot.engaged.is_engaged(message.key))
    )
    if not should_answer(message, thread_engaged=engaged, mention_only=config.mention_only):
        return
    seen, record = await seen_before(bot.pipeline.store, message, event_id)
    if seen:
        await bot.answerer.on_duplicate(record)  # a Slack retry, the app_mention + message pair, ...
        return
    lang = detect_language(to_plain_text(message.raw_text, bot_user_id=bot_user_id))
    command = (
        thread_command(message.raw_text, bot_user_id=bot_user_id)
        if message.mentions_bot or message.is_dm
        else None
    )
    if command is not None:
        if await claim_message(bot.pipeline.store, message, event_id):
            await _thread_command(bot, message.key, command, user=message.user_id, lang=lang, trigger_id=None)
        return
    if not await bot.answerer.scope(config):
        if await claim_message(bot.pipeline.store, message, event_id):
            await bot.answerer.notify(message.channel_id, message.thread_ts, t("no_kb", lang), lang)
        return
    await bot.answerer.answer(message, lang=lang, config=config, bot_user_id=bot_user_id, event_id=event_id)


async def _shortcut(bot: ListenerHost, shortcut: dict[str, Any], command: str) -> None:
    message = shortcut.get("message") or {}
    channel = (shortcut.get("channel") or {}).get("id", "")
    team = (shortcut.get("team") or {}).get("id", "") or (bot.identity.team_id if bot.identity else "")
    thread_ts = message.get("thread_ts") or message.get("ts") or shortcut.get("message_ts", "")
    key = ConversationKey(source="slack", team_id=team, channel_id=channel, thread_ts=thread_ts)
    lang = detect_language(str(message.get("text") or ""))
    await _thread_command(
        bot,
        key,
        command,
        user=(shortcut.get("user") or {}).get("id", ""),
        lang=lang,
        trigger_id=shortcut.get("trigger_id"),
        message_ts=message.get("ts"),
        response_url=shortcut.get("response_url"),
    )


async def _thread_command(
    bot: ListenerHost,
    key: ConversationKey,
    command: str,
    *,
    user: str,
    lang: str,
    trigger_id: str | None,
    message_ts: str | None = None,
    response_url: str | None = None,
) -> None:
    """Compact the thread or show its trace, replying privately to the person who asked."""
    actions = bot.thread_actions
    lang = await actions.thread_lang(key, lang)

    async def tell(text: str) -> None:
        await actions.tell(
            channel=key.channel_id,
            user=user,
            thread_ts=key.thread_ts,
            message=plain(text),
            response_url=response_url,
        )

    if command == "compact":
        await tell(await actions.compact(key, lang))
        return
    record = await actions.record_for(key, message_ts=message_ts)
    if record is None:
        await tell(t("no_answer_here", lang))
    elif not (trigger_id and await actions.open_trace(trigger_id, record)):
        await actions.tell(
            channel=key.channel_id,
            user=user,
            thread_ts=key.thread_ts,
            message=actions.trace_card(record),
            response_url=response_url,
        )
