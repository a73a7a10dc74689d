"""HTTP mode: an aiohttp application serving Slack's requests at POST /slack/events, plus GET /healthz and
GET /metrics (Prometheus); in Socket Mode, /metrics alone on KB_METRICS_PORT."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request

from adapters.observability.metrics import CONTENT_TYPE, exposition

if TYPE_CHECKING:
    from adapters.slack.app import SlackBot

EVENTS_PATH = "/slack/events"
HEALTH_PATH = "/healthz"
METRICS_PATH = "/metrics"


async def metrics(_: web.Request) -> web.Response:
    """The Prometheus metrics (adapters.observability.metrics)."""
    return web.Response(body=exposition(), headers={"Content-Type": CONTENT_TYPE})


def build_metrics_app() -> web.Application:
    """GET /metrics alone, for Socket Mode (KB_METRICS_PORT), where no HTTP server runs otherwise."""
    app = web.Application()
    app.router.add_get(METRICS_PATH, metrics)
    return app


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
    app.router.add_get(METRICS_PATH, metrics)
    return app
