"""Optimistic writes: a concurrent writer wins, is never overwritten, and the conflict is reported."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from adapters.store.backends import SqlConversationStore, open_store
from core.conversation.compaction import CompactingContextLoader, compact_conversation
from core.conversation.locks import LocalConversationLock
from core.models import ContextSnapshot, ConversationKey, Turn, Usage
from core.ports import ConversationStore
from core.record import NO_DETAILS
from tests.compaction.conftest import ProgressCounter, chinese
from tests.fakes import FakeEngine, InMemoryConversationStore
from tests.stored import stored_question

RIVAL = ContextSnapshot("另一个进程写入的摘要", through_record_id=2, compacted_rounds=2, revision=1)


class RivalWritingEngine(FakeEngine):
    """Summarises like FakeEngine, but another writer saves a snapshot while the model is 'thinking'."""

    def __init__(self, rival: ConversationStore, conversation_id: str) -> None:
        super().__init__()
        self.rival = rival
        self.conversation_id = conversation_id
        self.rival_saved: list[bool] = []

    async def summarise(self, previous: str, turns: Sequence[Turn], *, max_tokens: int) -> tuple[str, Usage]:
        current = await self.rival.read_context(self.conversation_id)
        saved = await self.rival.save_context(
            self.conversation_id, expected_revision=current.revision, snapshot=RIVAL
        )
        self.rival_saved.append(saved)
        return await super().summarise(previous, turns, max_tokens=max_tokens)


async def _fill(store: ConversationStore, conversation_id: str, count: int) -> list[int]:
    ids = []
    for index in range(count):
        record = await stored_question(
            store, conversation_id, f"第{index + 1}问:" + chinese(30, offset=index)
        )
        await store.complete_record(
            record.id,
            answer=f"第{index + 1}答:" + chinese(200, offset=index + 3),
            rewritten=None,
            details=NO_DETAILS,
        )
        ids.append(record.id)
    return ids


async def test_a_concurrent_writer_is_detected_and_never_overwritten() -> None:
    """When the revision moves between read and save, nothing is overwritten and the conflict is reported."""
    store = InMemoryConversationStore()
    conversation_id = ConversationKey("cli", thread_ts="1").as_id()
    await _fill(store, conversation_id, 12)
    engine = RivalWritingEngine(store, conversation_id)
    loader = CompactingContextLoader(store=store, engine=engine, recent_tokens=2500)

    context = await loader.load(conversation_id, before_id=10**9, on_compacting=ProgressCounter())

    assert engine.rival_saved == [True]
    stored = await store.read_context(conversation_id)
    assert (stored.summary, stored.through_record_id, stored.revision) == (RIVAL.summary, 2, 1)
    assert context.metadata.compaction_error == "context_conflict"
    assert context.metadata.compacted is False
    assert context.metadata.revision == 0  # what this load actually used
    assert not context.messages[0].content.startswith("以下是较早会话")  # no half-written summary used


@pytest.fixture
async def sqlite_store(tmp_path: Path) -> AsyncIterator[SqlConversationStore]:
    """A real SQLite store in a temporary file."""
    store = await open_store(f"sqlite:///{tmp_path}/c.sqlite3")
    try:
        yield store
    finally:
        await store.close()


async def test_compaction_round_trips_through_a_real_sqlite_store(
    sqlite_store: SqlConversationStore, tmp_path: Path
) -> None:
    """On SQLite: compaction saves summary and watermark, a reload does not summarise again, records stay."""
    conversation_id = ConversationKey("cli", thread_ts="7").as_id()
    ids = await _fill(sqlite_store, conversation_id, 12)
    engine = FakeEngine()
    engine.summaries.append("用户询问了行政复议的期限。")
    loader = CompactingContextLoader(store=sqlite_store, engine=engine, recent_tokens=2500)

    first = await loader.load(conversation_id, before_id=10**9, on_compacting=ProgressCounter())
    second = await loader.load(conversation_id, before_id=10**9, on_compacting=ProgressCounter())
    report = await compact_conversation(conversation_id, loader=loader, lock=LocalConversationLock())

    stored = await sqlite_store.read_context(conversation_id)
    recent_ids = [t.record_id for t in first.turns]
    assert stored.revision == 1
    assert stored.through_record_id == ids[len(ids) - len(recent_ids) - 1]
    assert stored.summary.startswith("用户询问了行政复议的期限。")
    assert second.messages == first.messages
    assert len(engine.calls("summarise")) == 1
    assert (report.compacted, report.reason, report.revision) == (False, "under_budget", 1)
    assert len(await sqlite_store.list_records(conversation_id)) == 12


async def test_a_concurrent_writer_on_another_sqlite_connection_wins_cleanly(tmp_path: Path) -> None:
    """Two stores on one SQLite file: the rival's save lands first, ours is refused, the rival's row stays."""
    url = f"sqlite:///{tmp_path}/shared.sqlite3"
    ours, rival = await open_store(url), await open_store(url)
    try:
        conversation_id = ConversationKey("cli", thread_ts="9").as_id()
        await _fill(ours, conversation_id, 12)
        engine = RivalWritingEngine(rival, conversation_id)
        loader = CompactingContextLoader(store=ours, engine=engine, recent_tokens=2500)

        context = await loader.load(conversation_id, before_id=10**9, on_compacting=ProgressCounter())

        stored = await ours.read_context(conversation_id)
        assert engine.rival_saved == [True]
        assert (stored.summary, stored.revision) == (RIVAL.summary, 1)
        assert context.metadata.compaction_error == "context_conflict"
    finally:
        await ours.close()
        await rival.close()
