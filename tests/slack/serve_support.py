"""`kb serve` in HTTP mode for a test: a free port, signed events, and the server up (in process or as a subprocess)."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import aiohttp
import pytest

from adapters.slack.app import SlackOptions
from bot.cli.operations.serve import run_server
from bot.settings import Settings
from tests.slack.fake_pipeline import FakePipeline
from tests.slack.harness import SECRET, ledger_for, sign
from tests.slack.mock_slack_api import MockSlackApi

ROOT = Path(__file__).resolve().parents[2]


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
    return body, signed_headers(body)


def signed_headers(body: str) -> dict[str, str]:
    """The headers that sign an event body as Slack would, stamped now."""
    stamp = int(time.time())
    return {
        "Content-Type": "application/json",
        "X-Slack-Request-Timestamp": str(stamp),
        "X-Slack-Signature": sign(body, timestamp=stamp),
    }


def event_body(event_id: str, **event: str) -> str:
    """An event callback body from team T1, channel C1, user U1, with the event's own fields."""
    return json.dumps(
        {
            "type": "event_callback",
            "team_id": "T1",
            "api_app_id": "A1",
            "event_id": event_id,
            "event_time": int(time.time()),
            "event": {"team": "T1", "channel": "C1", "user": "U1", **event},
        }
    )


async def start_kb_serve(env: dict[str, str], mock: MockSlackApi) -> tuple[asyncio.subprocess.Process, str]:
    """Start `kb serve` in HTTP mode against the mock; returns the process and its base URL once healthy."""
    port = free_port()
    server = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        "serve",
        "--port",
        str(port),
        env={
            **env,
            "SLACK_BOT_TOKEN": "xoxb-test",
            "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_URL": mock.url,
        },
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    async with aiohttp.ClientSession() as http:
        for _ in range(600):
            try:
                async with http.get(f"{base}/healthz") as response:
                    if response.status == 200:
                        return server, base
            except aiohttp.ClientConnectionError:
                pass
            await asyncio.sleep(0.1)
    server.kill()
    pytest.fail("kb serve did not become healthy")


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
