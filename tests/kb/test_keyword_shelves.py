"""Keyword indexes of two machines sharing one PostgreSQL shelf: segments stored once, fetched, kept current."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from adapters.knowledge.keywords.index import SEGMENTS, KeywordIndex
from adapters.knowledge.keywords.postgres_shelf import PostgresShelf
from tests.adapters.postgres_support import POSTGRES_URL, require_postgres


def _machine(folder: Path, key: str) -> KeywordIndex:
    return KeywordIndex(folder, PostgresShelf(POSTGRES_URL, key))


async def test_a_second_machine_fetches_the_saved_segments_and_takes_later_changes_at_refresh(
    tmp_path: Path,
) -> None:
    """What machine A saves, machine B (no folder of its own yet) loads from the database and finds; A's next
    change reaches B at refresh(), its new segment fetched, its removal applied; clear() empties both."""
    await require_postgres()
    key = f"kb-test-{uuid.uuid4().hex[:10]}"
    first, second = _machine(tmp_path / "a", key), _machine(tmp_path / "b", key)

    def scenario() -> None:
        try:
            first.add([("old", "行政复议申请期限为六十日"), ("keep", "劳动合同的试用期")])
            first.signature = "sig-1"
            first.save()
            assert second.load() and second.signature == "sig-1"
            assert [chunk_id for chunk_id, _ in second.search("行政复议", 3)] == ["old"]
            assert not second.refresh()
            first.apply(["old"], first.tokenise([("new", "行政复议申请期限改为九十日")]), "sig-2")
            first.save()
            assert second.refresh() and second.signature == "sig-2"
            assert [chunk_id for chunk_id, _ in second.search("行政复议", 3)] == ["new"]
            assert sorted(path.name for path in (tmp_path / "b" / SEGMENTS).iterdir()) == sorted(
                path.name for path in (tmp_path / "a" / SEGMENTS).iterdir()
            )
            first.clear_saved()
            assert second.saved_signature() is None and not second.has_saved()
        finally:
            first.close()
            second.close()

    await asyncio.to_thread(scenario)


async def test_saves_from_two_machines_in_turn_keep_both_and_apply_each_ones_removals(tmp_path: Path) -> None:
    """B saves after A without having seen A's save: the manifest holds both segments, B's removal of a chunk
    A had saved is applied to it too."""
    await require_postgres()
    key = f"kb-test-{uuid.uuid4().hex[:10]}"
    first, second = _machine(tmp_path / "a", key), _machine(tmp_path / "b", key)

    def scenario() -> None:
        try:
            first.add([("a", "港口 码头")])
            first.save()
            second.load()
            first.add([("b", "港口 仓库")])
            first.save()
            second.remove(["b"])
            second.add([("c", "港口 航道")])
            second.save()
            third = _machine(tmp_path / "c", key)
            try:
                assert third.load() and third.ids() == {"a", "c"}
            finally:
                third.clear_saved()
                third.close()
        finally:
            first.close()
            second.close()

    await asyncio.to_thread(scenario)
