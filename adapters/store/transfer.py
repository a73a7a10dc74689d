"""Moving a conversation store between databases: every row of its tables as JSON Lines, and back.

What moves is what a store means: conversations, their records (questions, answers, details with traces,
feedback and earlier attempts, delivery state), each conversation's summary and watermark, and the synced
sources' definitions and versions. Event claims (Slack's duplicate-event keys, kept minutes) and a source's
sync claim do not: they belong to the running instances. Rows are read and written table by table in the
order foreign keys need, by primary key, so SQLite ↔ PostgreSQL works either way.

Import is one transaction and idempotent: a row already there with the same values is left alone; a row
whose key is taken by different values (another store's history) stops the import before anything is
written, so two histories are never merged by accident. PostgreSQL's record id sequence is moved past the
imported ids. Written by hand because the store's schema is the project's own (no ORM to dump it).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from adapters.store.database import Database
from adapters.store.rows import dump_json
from adapters.store.schema import MIGRATIONS
from core.errors import InvalidInput
from core.messages import phrase

FORMAT = "kb-conversations"
FORMAT_VERSION = 1
PAGE = 500  # rows read per query, on export (by key) and on import (the rows already there)


@dataclass(frozen=True, slots=True)
class Table:
    """One table that moves: its name, primary key, JSON columns, and values reset on import."""

    name: str
    key: str
    json_columns: tuple[str, ...] = ()
    reset: Mapping[str, Any] = field(default_factory=dict)


TABLES = (
    Table("conversations", "id"),
    Table("records", "id", json_columns=("details",)),
    Table("conversation_context", "conversation_id"),
    Table("sources", "name", reset={"sync_owner": "", "sync_until": 0.0}),
)
_BY_NAME = {table.name: table for table in TABLES}


@dataclass
class ImportReport:
    """Rows written and rows already there, per table."""

    added: dict[str, int] = field(default_factory=dict)
    present: dict[str, int] = field(default_factory=dict)


def _plain(table: Table, row: Mapping[str, Any]) -> dict[str, Any]:
    """A row as JSON values: a JSON column as its object whatever the driver returned (text or parsed)."""
    plain = dict(row)
    for column in table.json_columns:
        value = plain.get(column)
        if isinstance(value, str):
            plain[column] = json.loads(value)
    return plain


async def export_lines(database: Database, *, page: int = PAGE) -> AsyncIterator[tuple[str, str]]:
    """(table, line): the header line (table ""), then one line per row: {"table": …, "row": {…}}."""
    counts = {}
    for table in TABLES:
        row = await database.fetchrow(f"SELECT count(*) AS n FROM {table.name}")
        counts[table.name] = int(row["n"]) if row else 0
    header = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "schema_version": len(MIGRATIONS),
        "exported_at": time.time(),
        "tables": counts,
    }
    yield "", json.dumps(header, ensure_ascii=False)
    for table in TABLES:  # page by key, so a large store is never held in memory at once
        rows = await database.fetch(f"SELECT * FROM {table.name} ORDER BY {table.key} LIMIT ?", (page,))
        while rows:
            for row in rows:
                plain = _plain(table, row)
                yield table.name, json.dumps({"table": table.name, "row": plain}, ensure_ascii=False)
            rows = await database.fetch(
                f"SELECT * FROM {table.name} WHERE {table.key} > ? ORDER BY {table.key} LIMIT ?",
                (rows[-1][table.key], page),
            )


def read_lines(lines: Iterable[str]) -> list[tuple[Table, dict[str, Any]]]:
    """The rows of an export, checked: its header first, known tables only, this schema or an older one."""
    rows: list[tuple[Table, dict[str, Any]]] = []
    header: dict[str, Any] | None = None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as error:
            raise InvalidInput(phrase("error.transfer_not_json", line=number, reason=error.msg)) from error
        if header is None:
            if not isinstance(item, dict) or item.get("format") != FORMAT:
                raise InvalidInput(phrase("error.transfer_not_export"))
            if int(item.get("schema_version") or 0) > len(MIGRATIONS):
                given = item.get("schema_version")
                raise InvalidInput(phrase("error.transfer_newer", given=given, ours=len(MIGRATIONS)))
            header = item
            continue
        table = _BY_NAME.get(str(item.get("table"))) if isinstance(item, dict) else None
        if table is None or not isinstance(item.get("row"), dict) or table.key not in item["row"]:
            raise InvalidInput(phrase("error.transfer_bad_row", line=number))
        rows.append((table, item["row"]))
    if header is None:
        raise InvalidInput(phrase("error.transfer_empty"))
    return rows


async def _column_names(database: Database, table: str) -> list[str]:
    if database.dialect.name == "sqlite":
        return [str(row["name"]) for row in await database.fetch(f"PRAGMA table_info({table})")]
    rows = await database.fetch(
        "SELECT column_name FROM information_schema.columns"
        " WHERE table_name = ? AND table_schema = current_schema()",
        (table,),
    )
    return [str(row["column_name"]) for row in rows]


def _same(table: Table, stored: Mapping[str, Any], given: Mapping[str, Any]) -> bool:
    """Whether the stored row holds the given values (JSON compared as values, numbers as floats)."""
    mine = _plain(table, stored)
    for column, value in given.items():
        if column in table.reset:
            continue
        have = mine.get(column)
        if isinstance(value, int | float) and isinstance(have, int | float) and not isinstance(value, bool):
            if abs(float(value) - float(have)) > 1e-6:
                return False
        elif have != value:
            return False
    return True


def _batches(
    rows: list[tuple[Table, dict[str, Any]]], page: int
) -> Iterable[tuple[Table, list[dict[str, Any]]]]:
    """Consecutive rows of one table, at most `page` at a time, in the export's order."""
    start = 0
    while start < len(rows):
        table, end = rows[start][0], start
        while end < len(rows) and end - start < page and rows[end][0] is table:
            end += 1
        yield table, [row for _, row in rows[start:end]]
        start = end


async def _stored(transaction: Database, table: Table, keys: list[Any]) -> dict[str, Mapping[str, Any]]:
    """The rows already there among these keys, by key (as text: drivers differ on number types)."""
    marks = ", ".join("?" for _ in keys)
    found = await transaction.fetch(f"SELECT * FROM {table.name} WHERE {table.key} IN ({marks})", keys)
    return {str(row[table.key]): row for row in found}


async def import_rows(
    database: Database, rows: list[tuple[Table, dict[str, Any]]], *, page: int = PAGE
) -> ImportReport:
    """Write the rows in one transaction (see the module docstring); InvalidInput on a conflicting row."""
    report = ImportReport()
    dialect = database.dialect
    async with database.transaction() as transaction:
        known = {table.name: set(await _column_names(transaction, table.name)) for table in TABLES}
        conflicts: list[str] = []
        for table, batch in _batches(rows, page):
            already = await _stored(transaction, table, [given[table.key] for given in batch])
            for given in batch:
                row = {column: value for column, value in given.items() if column in known[table.name]}
                row.update(table.reset)
                stored = already.get(str(row[table.key]))
                if stored is not None:
                    if _same(table, stored, row):
                        report.present[table.name] = report.present.get(table.name, 0) + 1
                    else:
                        conflicts.append(f"{table.name} {row[table.key]}")
                    continue
                columns = list(row)
                marks = [dialect.json_param if column in table.json_columns else "?" for column in columns]
                values = [
                    dump_json(row[column]) if column in table.json_columns else row[column]
                    for column in columns
                ]
                await transaction.fetch(
                    f"INSERT INTO {table.name} ({', '.join(columns)}) VALUES ({', '.join(marks)})", values
                )
                report.added[table.name] = report.added.get(table.name, 0) + 1
        if conflicts:
            shown = ", ".join(conflicts[:3]) + (" …" if len(conflicts) > 3 else "")
            raise InvalidInput(phrase("error.transfer_conflict", count=len(conflicts), rows=shown))
        if dialect.name == "postgresql" and report.added.get("records"):
            await transaction.fetch(
                "SELECT setval(pg_get_serial_sequence('records', 'id'),"
                " (SELECT COALESCE(max(id), 1) FROM records))"
            )
    return report
