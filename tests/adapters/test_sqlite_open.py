"""Opening one fresh SQLite file from many connections at once: every opener gets a WAL connection."""

from __future__ import annotations

import asyncio
from pathlib import Path

from adapters.store.database import SqliteDatabase


async def test_simultaneous_openers_of_a_fresh_file_all_switch_it_to_wal(tmp_path: Path) -> None:
    """Six connections racing to put each of 40 new files in WAL mode all succeed (SQLite answers the racing
    journal-mode change with "database is locked" without waiting, so the switch is retried)."""
    for n in range(40):
        path = tmp_path / f"race-{n}.sqlite3"
        opened = await asyncio.gather(
            *(SqliteDatabase.connect(path) for _ in range(6)), return_exceptions=True
        )
        failures = [result for result in opened if isinstance(result, BaseException)]
        for result in opened:
            if isinstance(result, SqliteDatabase):
                assert (await result.fetch("PRAGMA journal_mode"))[0]["journal_mode"] == "wal"
                await result.close()
        assert not failures, failures
