"""`kb history` and `kb trace` show where a Slack answer's delivery stands (state, attempts, last error)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from adapters.slack.delivery.ledger import Delivery, DeliveryState
from adapters.store.backends import SqliteConversationStore
from adapters.store.delivery_ledger import SqlDeliveryLedger
from bot.cli import main as kb_main
from core.models import ConversationKey
from core.record import NO_DETAILS
from tests.stored import stored_question

THREAD = ConversationKey("slack", "T1", "C1", "1700000000.000100")


async def _slack_thread(home: Path) -> tuple[int, int]:
    """An answered question Slack never acknowledged, and one delivered after a retry."""
    store = await SqliteConversationStore.open(home / "conversations.sqlite3")
    try:
        ledger = SqlDeliveryLedger(store.database)
        ids = []
        for question, delivery in (
            ("first?", Delivery(DeliveryState.FAILED, attempts=30, error="not_in_channel")),
            ("second?", Delivery(DeliveryState.DELIVERED, attempts=2)),
        ):
            record = await stored_question(store, THREAD, question, reply_to="C1:1700000000.000100")
            await store.complete_record(
                record.id, answer=f"answer to {question}", rewritten=None, details=NO_DETAILS
            )
            await ledger.save_delivery(record.id, delivery)
            ids.append(record.id)
        return ids[0], ids[1]
    finally:
        await store.close()


def test_history_and_trace_show_the_delivery_of_slack_answers(
    isolated_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Slack thread's history (by its conversation id) lists each answer's delivery; trace shows it too."""
    failed, _ = asyncio.run(_slack_thread(isolated_env))
    assert kb_main(["history", THREAD.as_id()]) == 0
    history = capsys.readouterr().out
    assert "#1 [answered] Q: first?" in history
    assert "delivery: failed after 30 attempts: not_in_channel" in history
    assert "delivery: delivered (2 attempts)" in history
    assert kb_main(["trace", str(failed)]) == 0
    assert "delivery: failed after 30 attempts: not_in_channel" in capsys.readouterr().out
