"""The synced sources' registry (core.ports.SourceRegistry) in the conversation database, so every instance
sees the same sources, schedules and last results.

A sync is claimed with one conditional UPDATE (the claim expires, so a crashed instance's claim lapses);
the versions and report are written, and the claim released, in one statement at the end.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from adapters.store.database import Database
from core.errors import InvalidInput
from core.messages import phrase
from core.sources.models import SourceSpec, SourceState, SyncReport

_COLUMNS = "name, kind, dataset, settings, every_seconds, versions, last_sync, created_at"


def _state(row: Mapping[str, Any]) -> SourceState:
    spec = SourceSpec(
        name=str(row["name"]),
        kind=str(row["kind"]),
        dataset=str(row["dataset"]),
        settings={str(k): str(v) for k, v in json.loads(row["settings"] or "{}").items()},
        every=float(row["every_seconds"]),
        created_at=float(row["created_at"]),
    )
    versions = {str(k): str(v) for k, v in json.loads(row["versions"] or "{}").items()}
    last = SyncReport.from_json(row["last_sync"]) if row["last_sync"] else None
    return SourceState(spec, versions, last)


class SqlSourceRegistry:
    """SourceRegistry over a Database shared with SqlConversationStore."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def add_source(self, spec: SourceSpec) -> None:
        row = await self._db.fetchrow(
            "INSERT INTO sources (name, kind, dataset, settings, every_seconds, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (name) DO NOTHING RETURNING name",
            (
                spec.name,
                spec.kind,
                spec.dataset,
                json.dumps(dict(spec.settings)),
                spec.every,
                spec.created_at,
            ),
        )
        if row is None:
            raise InvalidInput(phrase("error.source_exists", name=spec.name))

    async def get_source(self, name: str) -> SourceState | None:
        row = await self._db.fetchrow(f"SELECT {_COLUMNS} FROM sources WHERE name = ?", (name,))
        return None if row is None else _state(row)

    async def list_sources(self) -> list[SourceState]:
        return [_state(row) for row in await self._db.fetch(f"SELECT {_COLUMNS} FROM sources ORDER BY name")]

    async def remove_source(self, name: str) -> bool:
        return (
            await self._db.fetchrow("DELETE FROM sources WHERE name = ? RETURNING name", (name,)) is not None
        )

    async def claim_sync(self, name: str, owner: str, *, now: float, lease: float) -> bool:
        row = await self._db.fetchrow(
            "UPDATE sources SET sync_owner = ?, sync_until = ?"
            " WHERE name = ? AND (sync_until <= ? OR sync_owner = ?) RETURNING name",
            (owner, now + lease, name, now, owner),
        )
        return row is not None

    async def finish_sync(
        self, name: str, owner: str, report: SyncReport, versions: Mapping[str, str] | None
    ) -> None:
        if versions is None:
            await self._db.fetch(
                "UPDATE sources SET last_sync = ?, sync_owner = '', sync_until = 0"
                " WHERE name = ? AND sync_owner = ?",
                (report.to_json(), name, owner),
            )
            return
        await self._db.fetch(
            "UPDATE sources SET last_sync = ?, versions = ?, sync_owner = '', sync_until = 0"
            " WHERE name = ? AND sync_owner = ?",
            (report.to_json(), json.dumps(dict(versions), ensure_ascii=False), name, owner),
        )
