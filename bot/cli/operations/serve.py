"""`kb serve`: run the Slack bot, in Socket Mode (SLACK_APP_TOKEN set) or HTTP mode on --port."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import aiohttp
from aiohttp import web
from slack_sdk.errors import SlackApiError

from adapters.extractive import ExtractiveEngine
from adapters.observability.measured_engine import MeasuredEngine
from adapters.slack.app import SlackBot, SlackOptions, build_web_client
from adapters.slack.delivery.ledger import DeliveryLedger
from adapters.slack.delivery.slack_errors import error_code
from adapters.slack.measured import MeasuredLedger, MeasuredPipeline
from adapters.slack.pipeline_port import AnswerPipeline, SlackReads
from adapters.slack.surfaces.catalogue import KnowledgeCatalogue
from adapters.slack.web import EVENTS_PATH, METRICS_PATH, build_metrics_app, build_web_app
from bot.cli.knowledge.ingest import read_limits
from bot.compose.slack import build_slack_bot
from bot.compose.sources import run_schedule
from bot.settings import Settings
from core.errors import KbError
from core.ports import Engine
from core.sources.models import SourceState

DEFAULT_PORT = 3000


def register(commands: Any) -> None:
    """Add `kb serve` to the command line."""
    parser = commands.add_parser(
        "serve",
        help="run the Slack bot (Socket Mode when SLACK_APP_TOKEN is set, else HTTP on --port)",
        description="Run the Slack bot. Needs SLACK_BOT_TOKEN, and SLACK_APP_TOKEN (Socket Mode) or "
        "SLACK_SIGNING_SECRET (HTTP mode, POST /slack/events, GET /healthz). SLACK_API_URL overrides "
        "the Web API base URL.",
    )
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="HTTP mode port (default 3000)")
    parser.add_argument("--host", default="0.0.0.0", help="HTTP mode interface (default all)")
    parser.set_defaults(handler=serve)


def missing_setting(settings: Settings) -> str | None:
    """A clear message naming the first missing Slack setting, or None when the bot can start."""
    if not (settings.slack.bot_token or "").strip():
        return (
            "SLACK_BOT_TOKEN is not set: copy the Bot User OAuth Token (xoxb-…) from your Slack app's "
            "'OAuth & Permissions' page (see docs/slack.md)."
        )
    if not (settings.slack.app_token or settings.slack.signing_secret):
        return (
            "Neither SLACK_APP_TOKEN nor SLACK_SIGNING_SECRET is set: set SLACK_APP_TOKEN (xapp-…, "
            "connections:write) for Socket Mode, or SLACK_SIGNING_SECRET ('Basic Information' page) "
            "for HTTP mode (see docs/slack.md)."
        )
    return None


def measured(engine: Engine) -> Engine:
    """The engine with its model calls measured for /metrics (the offline engine makes none)."""
    return engine if isinstance(engine, ExtractiveEngine) else MeasuredEngine(engine)


async def serve(args: argparse.Namespace, settings: Settings) -> int:
    """The `kb serve` handler: check settings, build the services, run until SIGINT/SIGTERM."""
    problem = missing_setting(settings)
    if problem:
        print(f"kb serve: {problem}", file=sys.stderr)
        return 2
    from bot.compose import build_services  # the composition root owns the pipeline

    async with build_services(settings, wrap_engine=measured) as services:
        warming = asyncio.create_task(warm_up_knowledge(services.kb))
        registry = services.sources
        assert registry is not None  # build_services always builds it
        syncing = asyncio.create_task(
            run_schedule(services.settings, services.kb, registry, read_limits(settings))
        )
        try:
            await announce_scopes(services.settings, services.kb)
            return await run_server(
                services.settings,
                services.pipeline,
                reads=services.store,
                ledger=services.ledger,
                port=args.port,
                host=args.host,
                options=slack_options(services.settings),
                all_datasets=services.kb.list_datasets,
                catalogue=services.kb,
                sources=registry.list_sources,
            )
        finally:
            for task in (warming, syncing):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task


def slack_options(settings: Settings) -> SlackOptions:
    """The Slack bot's knobs that come from settings."""
    return SlackOptions(
        resume_interrupted=settings.slack.resume_interrupted,
        streaming=settings.slack.streaming,
    )


async def announce_scopes(settings: Settings, kb: Any) -> None:
    """Say at start when channels without a scope of their own search every dataset."""
    if not settings.unlisted_channels_search_everything:
        return
    try:
        count = len(await kb.list_datasets())
    except KbError:
        return
    every = f"all {count} datasets" if count != 1 else "the 1 dataset"
    if settings.channels:
        print(
            f"kb serve: channels without an entry in KB_CONFIG search {every} — add [channels.default] "
            "to restrict them",
            flush=True,
        )
    else:
        print(
            f"kb serve: no channel scopes configured: every channel searches {every} — restrict them in "
            "KB_CONFIG",
            flush=True,
        )


async def warm_up_knowledge(kb: Any) -> None:
    """Open every dataset and make its keyword index searchable, in the background, and say when done.

    A saved index loads in well under a second; one that must be rebuilt from Chroma (a new machine in
    server mode, a tokenizer upgrade) is rebuilt here rather than on the first question.
    """
    warm_up = getattr(kb, "warm_up", None)
    if warm_up is None:
        return
    started = time.perf_counter()
    try:
        names = await warm_up()
    except KbError as exc:
        print(
            f"kb serve: the knowledge base could not be prepared ({exc.message('en')}); searches will retry.",
            file=sys.stderr,
        )
        return
    print(
        f"kb serve: {len(names)} dataset(s) ready for search in {time.perf_counter() - started:.1f} s",
        flush=True,
    )


def _stop_on_signals(stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)


async def run_server(
    settings: Settings,
    pipeline: AnswerPipeline,
    *,
    reads: SlackReads,
    ledger: DeliveryLedger,
    port: int = DEFAULT_PORT,
    host: str = "0.0.0.0",
    options: SlackOptions | None = None,
    stop: asyncio.Event | None = None,
    all_datasets: Callable[[], Awaitable[Sequence[str]]] | None = None,
    catalogue: KnowledgeCatalogue | None = None,
    sources: Callable[[], Awaitable[Sequence[SourceState]]] | None = None,
) -> int:
    """Serve Slack until `stop` is set (or a signal arrives); in-flight answers are finished or interrupted."""
    stop = stop or asyncio.Event()
    _stop_on_signals(stop)
    socket_mode = bool(settings.slack.app_token)
    pipeline, ledger = MeasuredPipeline(pipeline), MeasuredLedger(ledger)  # /metrics
    async with aiohttp.ClientSession() as session:
        client = build_web_client(settings.slack.bot_token, base_url=settings.slack.api_url, session=session)
        bot = build_slack_bot(
            client=client,
            pipeline=pipeline,
            reads=reads,
            ledger=ledger,
            channel_config=settings.channel,
            signing_secret=settings.slack.signing_secret,
            socket_mode=socket_mode,
            options=options,
            all_datasets=all_datasets,
            catalogue=catalogue,
            channel_scopes=settings.channels,
            sources=sources,
        )
        try:
            identity = await bot.start()
        except SlackApiError as exc:
            print(
                f"kb serve: Slack rejected SLACK_BOT_TOKEN (auth.test: {error_code(exc)}).", file=sys.stderr
            )
            return 2
        except aiohttp.ClientError as exc:
            print(f"kb serve: cannot reach the Slack Web API at {client.base_url}: {exc}", file=sys.stderr)
            return 2
        if socket_mode:
            await _run_socket_mode(bot, settings, client, stop)
        else:
            runner = web.AppRunner(build_web_app(bot))
            await runner.setup()
            site = web.TCPSite(runner, host, port)
            await site.start()
            print(
                f"kb serve: bot <@{identity.user_id}> in {identity.team_id}; HTTP mode on {host}:{port}{EVENTS_PATH}",
                flush=True,
            )
            await stop.wait()
            await site.stop()  # no new requests; answers already started keep running
            interrupted = await bot.shutdown()
            await runner.cleanup()
            print(f"kb serve: stopped ({interrupted} answer(s) interrupted)", flush=True)
    return 0


async def _run_socket_mode(bot: SlackBot, settings: Settings, client: Any, stop: asyncio.Event) -> None:
    from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

    handler: Any = AsyncSocketModeHandler(bot.app, app_token=settings.slack.app_token, web_client=client)
    await handler.connect_async()
    print("kb serve: connected in Socket Mode", flush=True)
    metrics: web.AppRunner | None = None
    if settings.slack.metrics_port:
        metrics = web.AppRunner(build_metrics_app())
        await metrics.setup()
        await web.TCPSite(metrics, "0.0.0.0", settings.slack.metrics_port).start()
        print(f"kb serve: metrics on port {settings.slack.metrics_port}{METRICS_PATH}", flush=True)
    await stop.wait()
    if metrics is not None:
        await metrics.cleanup()
    await handler.disconnect_async()
    interrupted = await bot.shutdown()
    await handler.close_async()
    print(f"kb serve: stopped ({interrupted} answer(s) interrupted)", flush=True)
