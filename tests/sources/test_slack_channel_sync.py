"""`kb sources` over a live Slack channel (the mock Slack Web API driven by slack_sdk), as subprocesses: the
channel's threads are paged through, a 429 is waited out, answers cite the thread's permalink, an edit
changes the answer after the next sync, a deleted thread is gone, a private channel needs private=true and
a dataset of its own, and a live sync continues an imported export."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.cli.cli_support import ROOT, clean_env
from tests.slack.mock_slack_api import MockSlackApi
from tests.sources.slack_export_zip import message, threaded, write_export

CHANNEL = "C200"


async def kb_async(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    """`python -m bot ARGS` without blocking the loop the mock Slack API answers on."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bot",
        *args,
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=120)
    return process.returncode or 0, out.decode(), err.decode()


async def add_channel_source(
    env: dict[str, str], name: str, channel: str, dataset: str, *settings: str, every: str = "0"
) -> tuple[int, str, str]:
    """`kb sources add NAME --kind slack-channel` unpaced (per_minute=0), with more `--set` settings."""
    more = [arg for setting in settings for arg in ("--set", setting)] + ["--every", every]
    return await kb_async(
        env,
        "sources",
        "add",
        name,
        "--kind",
        "slack-channel",
        "--channel",
        channel,
        "--dataset",
        dataset,
        "--set",
        "per_minute=0",
        *more,
    )


@pytest.fixture
async def slack_api() -> AsyncIterator[MockSlackApi]:
    api = await MockSlackApi().start()
    api.add_channel(CHANNEL, members=["U1", "U2"], name="it-help")
    api.user_names.update({"U1": "alice", "U2": "bob"})
    api.history_page_size = 2  # three threads: two pages of history
    api.replies_page_size = 2
    try:
        yield api
    finally:
        await api.close()


async def test_a_live_channel_syncs_cites_permalinks_and_follows_edits_and_deletions(
    slack_api: MockSlackApi, tmp_path: Path
) -> None:
    """Threads (root and replies, bots left out) become documents; the answer cites the permalink; after an
    edited reply and a sync the answer quotes the new text; after the thread is deleted it is gone."""
    api = slack_api
    vpn = api.say(CHANNEL, "U1", "How do I get VPN access from home?")
    fix = api.say(CHANNEL, "U2", "Request it in the IT portal, then install GlobalProtect.", thread_ts=vpn)
    api.say(CHANNEL, "U1", "thanks <@U2>, that worked", thread_ts=vpn)
    api.history[CHANNEL].append(
        {
            "type": "message",
            "user": "UBOT",
            "bot_id": "BBOT",
            "ts": "1800000099.000001",
            "thread_ts": vpn,
            "text": "Here is what the handbook says about printers.",
        }
    )
    api.say(CHANNEL, "U2", "The printer on floor 2 is the HP 4410; add it as print01.")
    api.say(CHANNEL, "U1", "Reminder: the canteen closes at 14:00 on Fridays.")
    api.throttle("conversations.history", times=1, retry_after=1)
    env = clean_env(tmp_path / "home", SLACK_BOT_TOKEN="xoxb-test", SLACK_API_URL=api.url)
    code, out, err = await add_channel_source(env, "it", CHANNEL, "slack")
    assert code == 0, err

    code, out, err = await kb_async(env, "sources", "sync", "it")
    assert code == 0, err
    assert "documents: 3 new, 0 changed, 0 unchanged, 0 removed" in out, out
    assert api.rate_limited["conversations.history"] == 1
    assert len(api.calls_to("conversations.history")) == 2  # two pages
    assert len(api.calls_to("conversations.replies")) == 2  # the VPN thread: four messages, two pages

    code, out, err = await kb_async(env, "ask", "how do I get VPN access?", "--dataset", "slack", "--json")
    record = json.loads(out)
    link = f"https://test.slack.com/archives/{CHANNEL}/p{vpn.replace('.', '')}"
    assert "GlobalProtect" in record["answer"]
    assert link in [c["source"] for c in record["details"]["citations"]]
    code, out, err = await kb_async(env, "search", "thanks that worked", "--dataset", "slack", "--json")
    contents = [hit["content"] for hit in json.loads(out)["hits"]]
    assert any("thanks @bob, that worked" in content for content in contents)  # mentions by name
    assert not any("handbook says" in content for content in contents)  # the bot's reply is left out

    api.edit(CHANNEL, fix, "Request it in the IT portal, then install the WireGuard client.")
    code, out, err = await kb_async(env, "sources", "sync", "it")
    assert "documents: 0 new, 1 changed, 2 unchanged, 0 removed" in out, out
    code, out, err = await kb_async(env, "ask", "how do I get VPN access?", "--dataset", "slack", "--json")
    answer = json.loads(out)["answer"]
    assert "WireGuard" in answer and "GlobalProtect" not in answer

    api.erase(CHANNEL, vpn)
    code, out, err = await kb_async(env, "sources", "sync", "it")
    assert "documents: 0 new, 0 changed, 2 unchanged, 1 removed" in out, out
    code, out, err = await kb_async(env, "search", "VPN access WireGuard", "--dataset", "slack", "--json")
    assert code == 0 and not any("WireGuard" in hit["content"] for hit in json.loads(out)["hits"])
    code, out, err = await kb_async(env, "docs", "list", "--dataset", "slack", "--json")
    names = sorted(doc["name"] for doc in json.loads(out))
    assert names == [
        "#it-help: Reminder: the canteen closes at 14:00 on Fridays.",
        "#it-help: The printer on floor 2 is the HP 4410; add it as print01.",
    ]
    code, out, err = await kb_async(env, "sources", "show", "it")
    assert "documents: 2" in out and "1 removed" in out


async def test_a_private_channel_is_synced_only_when_marked_private_into_a_dataset_of_its_own(
    slack_api: MockSlackApi, tmp_path: Path
) -> None:
    """Unmarked, a private channel's sync fails with one line (exit 1) and writes nothing; a private source
    may not share its dataset; marked private=true into its own dataset, it syncs."""
    slack_api.add_channel("G300", members=["U1"], name="hr-private", is_private=True)
    slack_api.say("G300", "U1", "The salary review is in March.")
    env = clean_env(tmp_path / "home", SLACK_BOT_TOKEN="xoxb-test", SLACK_API_URL=slack_api.url)
    await kb_async(
        env, "sources", "add", "hr", "--kind", "slack-channel", "--channel", "G300", "--dataset", "hr"
    )
    code, out, err = await kb_async(env, "sources", "sync", "hr")
    assert code == 1
    assert "private channel is synced only with --set private=true" in out and "Traceback" not in out + err
    assert slack_api.calls_to("conversations.history") == []
    code, out, err = await kb_async(env, "sources", "show", "hr")
    assert "documents: 0" in out and "failed: " in out

    code, _, err = await add_channel_source(env, "hr-private", "G300", "hr", "private=true")
    assert code == 2 and "a dataset of its own" in err
    code, _, err = await add_channel_source(env, "hr-private", "G300", "hr-only", "private=true")
    assert code == 0, err
    code, out, err = await kb_async(env, "sources", "sync", "hr-private")
    assert code == 0 and "documents: 1 new" in out, out + err


async def test_a_live_sync_continues_an_imported_export_instead_of_duplicating_it(
    slack_api: MockSlackApi, tmp_path: Path
) -> None:
    """The same thread imported from an export and then read live is one document: the live sync finds it
    unchanged (same key, text and permalink), and a reply added since changes it in place."""
    root = message("U1", "1767600000.000100", "How do I get VPN access from home?")
    reply = message("U2", "1767600060.000200", "Request it in the IT portal, then install GlobalProtect.")
    thread = threaded(root, [reply])
    export = write_export(tmp_path / "export.zip", {(CHANNEL, "it-help"): thread})
    env = clean_env(tmp_path / "home", SLACK_BOT_TOKEN="xoxb-test", SLACK_API_URL=slack_api.url)
    await kb_async(
        env,
        "sources",
        "add",
        "archive",
        "--kind",
        "slack-export",
        "--path",
        str(export),
        "--dataset",
        "slack",
        "--workspace-url",
        "https://test.slack.com",
    )
    code, out, err = await kb_async(env, "sources", "sync", "archive")
    assert "documents: 1 new" in out, out + err
    slack_api.history[CHANNEL] = [dict(m) for m in thread]  # the same messages, now read live
    await add_channel_source(env, "it", CHANNEL, "slack")
    code, out, err = await kb_async(env, "sources", "sync", "it")
    assert "documents: 0 new, 0 changed, 1 unchanged, 0 removed" in out, out + err
    slack_api.say(CHANNEL, "U1", "Thanks, and the certificate lasts 90 days.", thread_ts=root["ts"])
    code, out, err = await kb_async(env, "sources", "sync", "it")
    assert "documents: 0 new, 1 changed, 0 unchanged, 0 removed" in out, out + err
    code, out, err = await kb_async(env, "docs", "list", "--dataset", "slack", "--json")
    assert code == 0 and len(json.loads(out)) == 1, err
