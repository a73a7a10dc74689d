"""The throttled editor and the workspace chat.update budget, against the mock Slack Web API."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator

import aiohttp
import pytest
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.app import build_web_client
from adapters.slack.delivery.update_budget import UpdateBudget
from adapters.slack.rendering.blocks import SlackMessage, section
from adapters.slack.reply.message_editor import MessageEditor
from tests.slack.mock_slack_api import MockSlackApi


@pytest.fixture
async def api() -> AsyncIterator[tuple[MockSlackApi, AsyncWebClient]]:
    """A mock Slack API and a client pointed at it."""
    mock = await MockSlackApi().start()
    async with aiohttp.ClientSession() as session:
        yield mock, build_web_client("xoxb-test", base_url=mock.url, session=session)
    await mock.close()
    assert mock.violations == []


def _message(text: str) -> SlackMessage:
    return SlackMessage(text=text, blocks=[section(text)])


async def _posted(client: AsyncWebClient) -> str:
    response = await client.chat_postMessage(channel="C1", thread_ts="1.1", text="…", blocks=[section("…")])
    return str(response["ts"])


async def test_edits_of_one_message_are_spaced_by_the_interval_and_coalesced(
    api: tuple[MockSlackApi, AsyncWebClient],
) -> None:
    """Forty quick states become a few edits at least min_interval apart, ending with the final content."""
    mock, client = api
    editor = MessageEditor(
        client, channel="C1", ts=await _posted(client), budget=UpdateBudget(), min_interval=0.15
    )
    for i in range(40):
        editor.show(_message(f"state {i}"))
        await asyncio.sleep(0.02)
    await editor.finish(_message("final"))
    updates = mock.calls_to("chat.update")
    gaps = [b.at - a.at for a, b in itertools.pairwise(updates)]
    assert 3 <= len(updates) <= 8
    assert min(gaps) >= 0.14
    assert updates[-1].params["text"] == "final"
    assert editor.coalesced > 0


async def test_nothing_intermediate_is_sent_after_the_final_edit(
    api: tuple[MockSlackApi, AsyncWebClient],
) -> None:
    """show() after finish() is ignored, so a late phase can never overwrite the answer."""
    mock, client = api
    editor = MessageEditor(
        client, channel="C1", ts=await _posted(client), budget=UpdateBudget(), min_interval=0.0
    )
    await editor.finish(_message("final"))
    editor.show(_message("late phase"))
    await asyncio.sleep(0.1)
    assert [c.params["text"] for c in mock.calls_to("chat.update")] == ["final"]


async def test_a_short_budget_drops_intermediate_phases_but_never_final_content(
    api: tuple[MockSlackApi, AsyncWebClient],
) -> None:
    """With 4 updates per window shared by three messages, every final lands and intermediates give way."""
    mock, client = api
    budget = UpdateBudget(limit=4, window=0.6, reserve=1, margin=0.0)
    editors = [
        MessageEditor(client, channel="C1", ts=await _posted(client), budget=budget, min_interval=0.01)
        for _ in range(3)
    ]
    for round_ in range(5):
        for editor in editors:
            editor.show(_message(f"phase {round_}"))
        await asyncio.sleep(0.03)
    await asyncio.gather(*(editor.finish(_message(f"final {i}")) for i, editor in enumerate(editors)))
    finals = {m.ts: m.text for m in mock.messages.values()}
    assert sorted(finals.values()) == ["final 0", "final 1", "final 2"]
    assert budget.refused_intermediate > 0 and budget.granted_intermediate <= 3
    assert budget.granted_final == 3


def test_the_budget_never_grants_more_than_its_limit_in_any_window() -> None:
    """Over a simulated busy minute, no 60-second span holds more than `limit` grants."""
    now = [0.0]
    budget = UpdateBudget(limit=50, window=60.0, reserve=5, margin=0.0, clock=lambda: now[0])
    grants: list[float] = []
    for step in range(3000):
        now[0] = step * 0.05
        if budget.try_acquire():
            grants.append(now[0])
    assert max(sum(1 for g in grants if start <= g < start + 60.0) for start in grants) <= 45
    assert len(grants) > 90


async def test_a_final_waits_for_a_token_instead_of_hitting_a_429(
    api: tuple[MockSlackApi, AsyncWebClient],
) -> None:
    """When the budget is spent, a final edit waits until a token returns, and the mock sees no 429."""
    mock, client = api
    mock.tier_limit("chat.update", per_minute=2, window=0.5)
    budget = UpdateBudget(limit=2, window=0.5, reserve=0, margin=0.1)
    editors = [
        MessageEditor(client, channel="C1", ts=await _posted(client), budget=budget, min_interval=0.0)
        for _ in range(3)
    ]
    started = asyncio.get_running_loop().time()
    await asyncio.gather(*(editor.finish(_message(f"final {i}")) for i, editor in enumerate(editors)))
    assert asyncio.get_running_loop().time() - started >= 0.45
    assert mock.rate_limited["chat.update"] == 0
    assert sorted(m.text for m in mock.messages.values()) == ["final 0", "final 1", "final 2"]
