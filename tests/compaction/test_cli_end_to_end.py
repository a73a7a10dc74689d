"""`kb compact` and `kb context` end to end: the real CLI, composition root and SQLite store under KB_HOME."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from adapters.store.backends import open_store
from bot.cli import main
from core.models import ConversationKey
from core.record import NO_DETAILS
from tests.compaction.conftest import chinese
from tests.stored import stored_question


async def _conversation(home: Path, name: str, turns: int) -> str:
    store = await open_store(f"sqlite:///{home}/conversations.sqlite3")
    try:
        conversation_id = ConversationKey(source="cli", channel_id=name).as_id()
        for index in range(turns):
            record = await stored_question(
                store,
                conversation_id,
                f"第{index + 1}问:项目「青鸾」预算 3,870 万元" + chinese(30, offset=index),
            )
            await store.complete_record(
                record.id, answer=chinese(400, offset=index), rewritten=None, details=NO_DETAILS
            )
        return conversation_id
    finally:
        await store.close()


def test_kb_compact_compacts_once_and_kb_context_shows_the_watermark(
    isolated_env: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Over budget `kb compact` compacts; again it finds nothing; `kb context --json` shows the new state."""
    monkeypatch.setenv("KB_CONTEXT_RECENT_TOKENS", "2500")
    conversation_id = asyncio.run(_conversation(isolated_env, "demo", 12))

    first = main(["compact", "demo"])
    second = main(["compact", conversation_id])
    out = capsys.readouterr().out.splitlines()
    shown = main(["context", "demo", "--json"])
    view = json.loads(capsys.readouterr().out)

    assert (first, second, shown) == (0, 0, 0)
    assert out[0].startswith("compacted: revision 1, ")
    assert out[1].startswith("nothing to compact, under budget; revision 1, ")
    assert view["revision"] == 1
    assert view["through_record_id"] > 0
    assert view["compacted_rounds"] + view["unsummarised_turns"] == 12
    assert "「青鸾」" in view["summary"] and "3,870" in view["summary"]
    assert view["next_question_compacts"] is False


def test_kb_compact_of_an_unknown_conversation_fails_clearly(
    isolated_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An unknown conversation is bad input: exit 2 with one `error:` line naming it."""
    assert main(["compact", "nobody"]) == 2
    assert capsys.readouterr().err.startswith("error: No conversation 'nobody'")
