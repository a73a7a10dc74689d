"""`kb serve`: clear messages for missing or rejected settings, and a real HTTP server with /healthz."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

import aiohttp
import pytest

from adapters.slack.app import SlackOptions
from adapters.slack.inbound.channel_config import ChannelConfig
from bot.cli.operations.serve import register, run_server, serve, warm_up_knowledge
from bot.settings import Settings
from core.errors import KnowledgeBaseError
from core.messages import phrase
from tests.slack.fake_pipeline import FakePipeline
from tests.slack.harness import SECRET, ledger_for
from tests.slack.mock_slack_api import MockSlackApi
from tests.slack.serve_support import free_port, http_mode, signed_mention

ARGS = argparse.Namespace(port=3000, host="127.0.0.1")


async def test_serve_without_a_bot_token_says_which_setting_is_missing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """No SLACK_BOT_TOKEN: exit code 2 and a message naming it."""
    assert await serve(ARGS, Settings()) == 2
    assert "SLACK_BOT_TOKEN is not set" in capsys.readouterr().err


async def test_http_mode_without_a_signing_secret_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bot token but neither an app token nor a signing secret: the message names both options."""
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-test")
    assert await serve(ARGS, Settings()) == 2
    assert "SLACK_SIGNING_SECRET" in capsys.readouterr().err


def test_serve_is_registered_with_a_port_option() -> None:
    """`kb serve --port N` parses, defaulting to 3000."""
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    assert parser.parse_args(["serve"]).port == 3000
    assert parser.parse_args(["serve", "--port", "4100"]).port == 4100


def _reads(pipeline: FakePipeline) -> dict[str, Any]:
    """What the bot reads beside the pipeline: its store, and the delivery ledger over the same records."""
    return {"reads": pipeline.store, "ledger": ledger_for(pipeline.store)}


async def test_a_rejected_token_is_reported_at_start(capsys: pytest.CaptureFixture[str]) -> None:
    """auth.test failing with invalid_auth stops the server with a clear message."""
    mock = await MockSlackApi().start()
    try:
        settings = Settings(
            slack={"bot_token": "xoxb-invalid", "signing_secret": SECRET, "api_url": mock.url}
        )
        pipeline = FakePipeline()
        served = run_server(settings, pipeline, **_reads(pipeline), port=free_port(), host="127.0.0.1")
        assert await served == 2
    finally:
        await mock.close()
    assert "Slack rejected SLACK_BOT_TOKEN (auth.test: invalid_auth)" in capsys.readouterr().err


async def test_http_mode_serves_healthz_and_signed_events_until_stopped() -> None:
    """run_server answers /healthz, verifies signatures, answers an event, and stops cleanly."""
    mock = await MockSlackApi().start()
    pipeline = FakePipeline()
    settings = Settings(
        slack={"bot_token": "xoxb-test", "signing_secret": SECRET, "api_url": mock.url},
        channels={"default": ChannelConfig(datasets=["docs"])},
    )
    try:
        async with http_mode(settings, pipeline) as (http, base):
            body, headers = signed_mention("hello?", ts="1500.000100", channel="C5")
            async with http.post(f"{base}/slack/events", data=body, headers=headers) as response:
                assert response.status == 200
            await mock.wait_for(
                lambda: (
                    "The answer is in the guide"
                    in "".join(m.block_text() for m in mock.thread("C5", "1500.000100"))
                )
            )
    finally:
        await mock.close()
    assert mock.violations == []


async def test_socket_mode_receives_an_event_over_the_websocket_and_answers() -> None:
    """With SLACK_APP_TOKEN set, the bot connects over Socket Mode, acks the envelope and answers, and serves
    /metrics on KB_METRICS_PORT."""
    mock = await MockSlackApi().start()
    mock.socket_envelopes.append(
        {
            "envelope_id": "env-1",
            "type": "events_api",
            "accepts_response_payload": False,
            "payload": {
                "type": "event_callback",
                "team_id": "T1",
                "event_id": "EvS1",
                "event": {
                    "type": "app_mention",
                    "text": "<@UBOT> over the socket?",
                    "user": "U1",
                    "ts": "1600.000100",
                    "channel": "C6",
                },
            },
        }
    )
    stop, metrics_port = asyncio.Event(), free_port()
    settings = Settings(
        slack={
            "bot_token": "xoxb-test",
            "app_token": "xapp-test",
            "api_url": mock.url,
            "metrics_port": metrics_port,
        },
        channels={"default": ChannelConfig(datasets=["docs"])},
    )
    pipeline = FakePipeline()
    server = asyncio.create_task(
        run_server(
            settings, pipeline, **_reads(pipeline), options=SlackOptions(min_edit_interval=0.05), stop=stop
        )
    )
    try:
        await mock.wait_for(
            lambda: (
                "The answer is in the guide"
                in "".join(m.block_text() for m in mock.thread("C6", "1600.000100"))
            ),
            within=10,
        )
        assert {"envelope_id": "env-1"} in [{"envelope_id": a.get("envelope_id")} for a in mock.socket_acks]
        async with (  # KB_METRICS_PORT: /metrics served in Socket Mode too
            aiohttp.ClientSession() as http,
            http.get(f"http://127.0.0.1:{metrics_port}/metrics") as response,
        ):
            assert response.status == 200 and "kb_questions_total" in await response.text()
    finally:
        stop.set()
        assert await asyncio.wait_for(server, 10) == 0
        await mock.close()
    assert mock.violations == []


async def test_warm_up_says_which_datasets_are_ready_and_a_store_failure_is_not_fatal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The background warm-up prints how many datasets are ready; a failing store is reported, not raised."""

    class Ready:
        async def warm_up(self) -> list[str]:
            return ["handbook", "laws"]

    class Down:
        async def warm_up(self) -> list[str]:
            raise KnowledgeBaseError(phrase("error.knowledge_store_failed"))

    await warm_up_knowledge(Ready())
    await warm_up_knowledge(Down())
    await warm_up_knowledge(object())  # a knowledge base without warm_up: nothing to do
    out = capsys.readouterr()
    assert "2 dataset(s) ready for search" in out.out
    assert "could not be prepared (The knowledge-base store failed.)" in out.err
