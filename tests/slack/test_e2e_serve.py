"""End to end: `kb serve` in HTTP mode as a subprocess, against the mock Slack Web API, answering signed events."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest

from tests.slack.mock_slack_api import MockSlackApi
from tests.slack.serve_support import event_body, signed_headers, start_kb_serve

ROOT = Path(__file__).resolve().parents[2]
DEPLOY_GUIDE = """# Deploy guide

## Deploying

Deploys run with `make deploy` from the main branch after the release tag is pushed.

## Rolling back

A rollback uses `make rollback` and restores the previous release within five minutes.
"""


def _ingested(tmp_path: Path, home: Path, **extra: str) -> dict[str, str]:
    """KB_HOME with the deploy guide ingested as dataset "team"; the environment to run kb with."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "deploy.md").write_text(DEPLOY_GUIDE, encoding="utf-8")
    env = {key: value for key, value in os.environ.items() if key not in ("KB_CONFIG", "KB_DATASETS")}
    env.update({"KB_HOME": str(home), "KB_MODEL": "extractive", **extra})
    done = subprocess.run(
        [sys.executable, "-m", "bot", "ingest", str(corpus), "--dataset", "team"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return env


@pytest.fixture
def environment(tmp_path: Path, isolated_env: Path) -> dict[str, str]:
    """KB_HOME with an ingested "team" dataset, and a KB_CONFIG scoping every channel to it."""
    config = tmp_path / "kb.toml"
    config.write_text('[channels.default]\ndatasets = ["team"]\n', encoding="utf-8")
    return _ingested(tmp_path, isolated_env, KB_CONFIG=str(config))


@pytest.mark.slow
async def test_kb_serve_with_no_configuration_answers_a_mention_from_every_dataset(
    tmp_path: Path, isolated_env: Path
) -> None:
    """One ingested dataset, no KB_CONFIG and no KB_DATASETS: `kb serve` says every channel searches it and
    answers a mention in any channel from it (as `kb ask` would)."""
    env = _ingested(tmp_path, isolated_env)
    mock = await MockSlackApi().start()
    server, base = await start_kb_serve(env, mock)
    try:
        mention = event_body("Ev1", type="app_mention", text="<@UBOT> How do deploys run?", ts="1710.000100")
        async with aiohttp.ClientSession() as http:
            async with http.post(
                f"{base}/slack/events", data=mention, headers=signed_headers(mention)
            ) as response:
                assert response.status == 200
            await mock.wait_for(
                lambda: "Sources" in "".join(m.block_text() for m in mock.thread("C1", "1710.000100")),
                within=60,
            )
    finally:
        server.send_signal(signal.SIGTERM)
        stdout, stderr = await asyncio.wait_for(server.communicate(), 60)
        await mock.close()
    [reply] = mock.thread("C1", "1710.000100")
    assert "make deploy" in reply.block_text() and "Deploy guide" in reply.block_text()
    assert server.returncode == 0, stderr.decode()
    assert (
        "no channel scopes configured: every channel searches the 1 dataset — restrict them in KB_CONFIG"
        in stdout.decode()
    )
    assert mock.violations == []


@pytest.mark.slow
async def test_kb_serve_answers_a_mention_and_a_follow_up_then_stops_cleanly(
    environment: dict[str, str],
) -> None:
    """Signed events to a real `kb serve` produce a natively streamed, sourced answer (its phases as a task
    timeline), then a follow-up."""
    mock = await MockSlackApi().start()
    server, base = await start_kb_serve(environment, mock)
    try:
        async with aiohttp.ClientSession() as http:
            mention = event_body(
                "Ev1", type="app_mention", text="<@UBOT> How do deploys run?", ts="1700.000100"
            )
            async with http.post(
                f"{base}/slack/events", data=mention, headers=signed_headers(mention)
            ) as response:
                assert response.status == 200
            forged = event_body("Ev2", type="app_mention", text="<@UBOT> forged", ts="1700.000150")
            headers = {**signed_headers(forged), "X-Slack-Signature": "v0=" + "0" * 64}
            async with http.post(f"{base}/slack/events", data=forged, headers=headers) as response:
                assert response.status == 401
            await mock.wait_for(
                lambda: "Sources" in "".join(m.block_text() for m in mock.thread("C1", "1700.000100")),
                within=60,
            )
            follow_up = event_body(
                "Ev3",
                type="message",
                channel_type="channel",
                text="How does a rollback restore the previous release?",
                ts="1700.000200",
                thread_ts="1700.000100",
            )
            async with http.post(
                f"{base}/slack/events", data=follow_up, headers=signed_headers(follow_up)
            ) as response:
                assert response.status == 200
            await mock.wait_for(
                lambda: (
                    len(mock.thread("C1", "1700.000100")) == 2
                    and "Sources" in mock.thread("C1", "1700.000100")[1].block_text()
                ),
                within=60,
            )
            home = event_body("Ev4", type="app_home_opened", user="U1", tab="home", channel="D1")
            started = json.dumps(
                {
                    "type": "event_callback",
                    "team_id": "T1",
                    "event_id": "Ev5",
                    "event": {
                        "type": "assistant_thread_started",
                        "assistant_thread": {"user_id": "U1", "channel_id": "D1", "thread_ts": "1700.000900"},
                    },
                }
            )
            for body in (home, started):
                async with http.post(
                    f"{base}/slack/events", data=body, headers=signed_headers(body)
                ) as response:
                    assert response.status == 200
            await mock.wait_for(
                lambda: "U1" in mock.home_views and ("D1", "1700.000900") in mock.suggested_prompts, within=30
            )
    finally:
        server.send_signal(signal.SIGTERM)
        stdout, stderr = await asyncio.wait_for(server.communicate(), 60)
        await mock.close()
    first, second = mock.thread("C1", "1700.000100")
    assert "make deploy" in first.block_text() and "Deploy guide" in first.block_text()
    assert "make rollback" in second.block_text()
    assert first.task_display_mode == "timeline" and not first.streaming
    assert first.tasks and all(task["status"] == "complete" for task in first.tasks.values())
    assert "⏳" not in first.block_text() and mock.calls_to("chat.stopStream")
    home_text = json.dumps(mock.home_views["U1"]["blocks"], ensure_ascii=False)
    assert "*team* — 1 document(s)" in home_text and "How do deploys run?" in home_text
    [prompt] = mock.suggested_prompts[("D1", "1700.000900")]["prompts"]
    assert prompt["title"] == "About “Deploy guide”"
    assert not any("forged" in m.block_text() for m in mock.messages.values())
    assert server.returncode == 0, stderr.decode()
    assert "HTTP mode on" in stdout.decode() and "stopped (0 answer(s) interrupted)" in stdout.decode()
    assert "1 dataset(s) ready for search" in stdout.decode()
    assert mock.violations == []
