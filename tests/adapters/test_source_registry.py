"""Contract tests of the synced sources' registry, on a real SQLite file and a real PostgreSQL schema."""

from __future__ import annotations

import asyncio

import pytest

from adapters.store.backends import SqlConversationStore
from adapters.store.source_registry import SqlSourceRegistry
from core.errors import InvalidInput
from core.sources.models import SourceSpec, SyncReport
from tests.adapters import test_sql_store

backend = test_sql_store.backend  # the same fixtures: a fresh SQLite file and PostgreSQL schema
store = test_sql_store.store

SPEC = SourceSpec("it-help", "slack-channel", "slack", {"channel": "C1", "per_minute": "0"}, 3600.0, 1.0)


async def test_a_source_is_added_once_listed_shown_and_removed(store: SqlConversationStore) -> None:
    """Add keeps kind, settings and schedule; a second add of the name is refused; remove forgets it."""
    registry = SqlSourceRegistry(store.database)
    await registry.add_source(SPEC)
    with pytest.raises(InvalidInput):
        await registry.add_source(SPEC)
    state = await registry.get_source("it-help")
    assert state is not None and state.spec == SPEC and state.versions == {} and state.last is None
    assert [s.spec.name for s in await registry.list_sources()] == ["it-help"]
    assert await registry.remove_source("it-help") and not await registry.remove_source("it-help")
    assert await registry.get_source("it-help") is None


async def test_one_sync_at_a_time_and_a_lapsed_claim_can_be_taken(store: SqlConversationStore) -> None:
    """Of two concurrent claims one wins; the loser gets the source after the winner finishes or after the
    winner's claim lapses; a finished sync keeps its versions and report, a failed one only its report."""
    registry = SqlSourceRegistry(store.database)
    await registry.add_source(SPEC)
    won = await asyncio.gather(
        registry.claim_sync("it-help", "a", now=100.0, lease=60.0),
        registry.claim_sync("it-help", "b", now=100.0, lease=60.0),
    )
    assert sorted(won) == [False, True]
    winner, loser = ("a", "b") if won[0] else ("b", "a")
    assert not await registry.claim_sync("it-help", loser, now=150.0, lease=60.0)
    assert await registry.claim_sync("it-help", loser, now=161.0, lease=60.0)  # the winner's claim lapsed
    report = SyncReport("it-help", 161.0, 2.5, added=2, skipped=(("slack:C1/1.0", "blank"),))
    await registry.finish_sync("it-help", winner, report, {"k": "v"})  # not the holder any more: ignored
    await registry.finish_sync("it-help", loser, report, {"slack:C1/1.0": "0||", "slack:C1/2.0": "1|2.0|"})
    state = await registry.get_source("it-help")
    assert state is not None and state.last == report and len(state.versions) == 2
    failed = SyncReport("it-help", 200.0, error="Cannot read the source #C1: not_in_channel")
    assert await registry.claim_sync("it-help", winner, now=200.0, lease=60.0)
    await registry.finish_sync("it-help", winner, failed, None)
    state = await registry.get_source("it-help")
    assert state is not None and state.last == failed and len(state.versions) == 2
