"""`run_server` in HTTP mode for a test: a free port, signed mentions, and the server up until the block ends."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import aiohttp

from adapters.slack.app import SlackOptions
from bot.cli.operations.serve import run_server
from bot.settings import Settings
from tests.slack.fake_pipeline import FakePipeline
from tests.slack.harness import ledger_for, sign


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def signed_mention(text: str, *, ts: str, channel: str) -> tuple[str, dict[str, str]]:
    """An app_mention event callback "<@UBOT> text" and the headers that sign it."""
    body = json.dumps(
        {
            "type": "event_callback",
            "team_id": "T1",
            "event_id": f"Ev{ts}",
            "event": {
                "type": "app_mention",
                "text": f"<@UBOT> {text}",
                "user": "U1",
                "ts": ts,
                "channel": channel,
            },
        }
    )
    stamp = int(time.time())
    headers = {
        "Content-Type": "application/json",
        "X-Slack-Request-Timestamp": str(stamp),
        "X-Slack-Signature": sign(body, timestamp=stamp),
    }
    return body, headers


@asynccontextmanager
async def http_mode(
    settings: Settings, pipeline: FakePipeline
) -> AsyncIterator[tuple[aiohttp.ClientSession, str]]:
    """run_server in HTTP mode over the fake pipeline, healthy: (a client session, the base URL); on exit it
    is stopped and must end with 0."""
    port, stop = free_port(), asyncio.Event()
    server = asyncio.create_task(
        run_server(
            settings,
            pipeline,
            reads=pipeline.store,
            ledger=ledger_for(pipeline.store),
            port=port,
            host="127.0.0.1",
            options=SlackOptions(min_edit_interval=0.05),
            stop=stop,
        )
    )
    base = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as http:
            for _ in range(200):
                try:
                    async with http.get(f"{base}/healthz") as response:
                        if response.status == 200:
                            break
                except aiohttp.ClientConnectionError:
                    await asyncio.sleep(0.05)
            yield http, base
    finally:
        stop.set()
        assert await asyncio.wait_for(server, 10) == 0
