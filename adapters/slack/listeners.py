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
from adapters.slack.inbound.intake import Intake, NewQuestion, Repeat, ThreadCommand, Unanswerable
from adapters.slack.inbound.triggers import BotIdentity
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
    """What the listeners need of the running bot (adapters.slack.app.SlackBot provides it)."""

    client: AsyncWebClient
    channel_config: Callable[[str], ChannelConfig]
    identity: BotIdentity | None
    closing: bool
    intake: Intake
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
        event_id = str(body.get("event_id") or "") or None
        work = _consider(bot, event, team_id=team_id, bot_user_id=bot_user_id, event_id=event_id)
        bot.spawn(work, name=f"message {event.get('channel')}:{event.get('ts')}")

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
        record = await bot.thread_actions.reads.get_record(int(action.get("value") or 0))
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
            lang = record.details.lang or detect_language(record.question)
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
    bot: ListenerHost, event: dict[str, Any], *, team_id: str, bot_user_id: str, event_id: str | None
) -> None:
    """What a person's message is to the bot, decided once (the intake), then acted on."""
    arrival = await bot.intake.take(event, team_id=team_id, bot_user_id=bot_user_id, event_id=event_id)
    if isinstance(arrival, NewQuestion):
        await bot.answerer.answer(arrival)
    elif isinstance(arrival, ThreadCommand):
        await bot.thread_actions.run(arrival.key, arrival.command, user=arrival.user, lang=arrival.lang)
    elif isinstance(arrival, Unanswerable):
        await bot.answerer.decline(arrival)
    elif isinstance(arrival, Repeat):
        await bot.answerer.on_duplicate(arrival.record)


async def _shortcut(bot: ListenerHost, shortcut: dict[str, Any], command: str) -> None:
    message = shortcut.get("message") or {}
    channel = (shortcut.get("channel") or {}).get("id", "")
    team = (shortcut.get("team") or {}).get("id", "") or (bot.identity.team_id if bot.identity else "")
    thread_ts = message.get("thread_ts") or message.get("ts") or shortcut.get("message_ts", "")
    key = ConversationKey(source="slack", team_id=team, channel_id=channel, thread_ts=thread_ts)
    lang = detect_language(str(message.get("text") or ""))
    await bot.thread_actions.run(
        key,
        command,
        user=(shortcut.get("user") or {}).get("id", ""),
        lang=lang,
        trigger_id=shortcut.get("trigger_id"),
        message_ts=message.get("ts"),
        response_url=shortcut.get("response_url"),
    )
