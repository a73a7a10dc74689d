"""HTTP mode: an aiohttp application serving Slack's requests at POST /slack/events, plus GET /healthz."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request

if TYPE_CHECKING:
    from adapters.slack.app import SlackBot

EVENTS_PATH = "/slack/events"
HEALTH_PATH = "/healthz"


def build_web_app(bot: SlackBot) -> web.Application:
    """Events, interactivity and slash commands all arrive at /slack/events; Bolt verifies signatures."""

    async def slack_events(request: web.Request) -> web.Response:
        response = await bot.app.async_dispatch(await to_bolt_request(request))
        return await to_aiohttp_response(response)

    async def health(_: web.Request) -> web.Response:
        status = 503 if bot.closing or bot.identity is None else 200
        return web.json_response(
            {"ok": status == 200, "closing": bot.closing, "in_flight": len(bot.answerer.in_flight)},
            status=status,
        )

    app = web.Application()
    app.router.add_post(EVENTS_PATH, slack_events)
    app.router.add_get(HEALTH_PATH, health)
    return app
