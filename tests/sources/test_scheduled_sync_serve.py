"""End to end: `kb serve` (HTTP mode, a subprocess) syncs a scheduled Slack channel source on its own, answers a
mention from the synced thread with its permalink, and the Home tab shows the source's last sync."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

import aiohttp
import pytest

from tests.cli.cli_support import clean_env
from tests.slack.mock_slack_api import MockSlackApi
from tests.slack.serve_support import event_body, signed_headers, start_kb_serve
from tests.sources.test_slack_channel_sync import add_channel_source, kb_async


@pytest.mark.slow
async def test_kb_serve_syncs_a_scheduled_source_and_shows_it_on_the_home_tab(tmp_path: Path) -> None:
    """A source added with --every is synced when `kb serve` starts (it never ran); the answer to a mention
    cites the thread's permalink; the Home tab lists the source with what its last sync did."""
    mock = await MockSlackApi().start()
    mock.add_channel("C200", members=["U1", "U2"], name="it-help")
    mock.user_names.update({"U1": "alice", "U2": "bob"})
    root = mock.say("C200", "U1", "How do I get VPN access from home?")
    mock.say("C200", "U2", "Request it in the IT portal, then install GlobalProtect.", thread_ts=root)
    env = clean_env(tmp_path / "home", KB_MODEL="extractive")
    code, _, err = await add_channel_source(env, "it", "C200", "slack", every="1h")
    assert code == 0, err
    server, base = await start_kb_serve({**env, "SLACK_BOT_TOKEN": "xoxb-test"}, mock)
    try:
        await mock.wait_for(lambda: bool(mock.calls_to("chat.getPermalink")), within=60)
        async with aiohttp.ClientSession() as http:
            for _ in range(100):  # the sync's last write lands just after its last Slack call
                code, out, _ = await kb_async(env, "sources", "list", "--json")
                if json.loads(out)[0]["last_sync"]:
                    break
                await asyncio.sleep(0.2)
            mention = event_body(
                "Ev1", type="app_mention", text="<@UBOT> how do I get VPN access?", ts="1710.000100"
            )
            async with http.post(
                f"{base}/slack/events", data=mention, headers=signed_headers(mention)
            ) as response:
                assert response.status == 200
            await mock.wait_for(
                lambda: "GlobalProtect" in "".join(m.block_text() for m in mock.thread("C1", "1710.000100")),
                within=60,
            )
            home = event_body("Ev2", type="app_home_opened", user="U1", tab="home", channel="D1")
            async with http.post(f"{base}/slack/events", data=home, headers=signed_headers(home)) as response:
                assert response.status == 200
            await mock.wait_for(lambda: "U1" in mock.home_views, within=30)
    finally:
        server.send_signal(signal.SIGTERM)
        stdout, stderr = await asyncio.wait_for(server.communicate(), 60)
        await mock.close()
    assert server.returncode == 0, stderr.decode()
    assert "kb serve: source it: documents: 1 new, 0 changed, 0 unchanged, 0 removed" in stdout.decode()
    [reply] = mock.thread("C1", "1710.000100")
    assert f"p{root.replace('.', '')}" in json.dumps(
        reply.blocks
    )  # the thread's permalink is the source link
    home_text = json.dumps(mock.home_views["U1"], ensure_ascii=False)
    assert "Synced sources" in home_text and "*it* (slack-channel → slack)" in home_text
    assert "1 new, 0 changed, 0 unchanged, 0 removed, 0 skipped" in home_text
    assert mock.violations == []
