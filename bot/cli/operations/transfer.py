"""`kb export FILE` / `kb import FILE`: a conversation store's history as JSON Lines, into another store.

Conversations, records with their traces and feedback, summaries and watermarks, and source definitions
move between any two stores (SQLite ↔ PostgreSQL, as KB_DATABASE_URL selects); vectors do not (ingest
again, or `kb datasets rebuild`). See adapters.store.transfer for what is kept and the conflict rule.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path
from typing import Any

from adapters.store.backends import open_store
from adapters.store.transfer import TABLES, export_lines, import_rows, read_lines
from bot.settings import Settings
from core.errors import InvalidInput
from core.messages import phrase


def register(commands: Any) -> None:
    """Add `kb export` and `kb import`."""
    export = commands.add_parser(
        "export", help="write every conversation, record, summary and source definition to a JSON Lines file"
    )
    export.add_argument("file", metavar="FILE", help="the file to write (replaced when it exists)")
    export.set_defaults(handler=run_export)
    load = commands.add_parser(
        "import", help="add the history of a `kb export` file to this store (idempotent; refuses a clash)"
    )
    load.add_argument("file", metavar="FILE", help="a file `kb export` wrote")
    load.set_defaults(handler=run_import)


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{counts.get(table.name, 0)} {table.name}" for table in TABLES)


async def run_export(args: argparse.Namespace, settings: Settings) -> int:
    """Write the store's rows to FILE through a temporary file, so a failed export leaves no half file."""
    target = Path(args.file)
    partial = target.with_name(f".{target.name}.partial")
    counts: dict[str, int] = {}
    async with await open_store(settings.storage.effective_database_url) as store:
        with partial.open("w", encoding="utf-8") as out:
            async for table, line in export_lines(store.database):
                out.write(line + "\n")
                if table:
                    counts[table] = counts.get(table, 0) + 1
    os.replace(partial, target)
    print(f"exported {_counts(counts)} to {target}")
    return 0


async def run_import(args: argparse.Namespace, settings: Settings) -> int:
    """Read FILE whole, check it, then write its rows in one transaction."""
    source = Path(args.file)
    try:
        text = await asyncio.to_thread(source.read_text, encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise InvalidInput(phrase("error.transfer_unreadable", path=source, reason=reason)) from error
    rows = read_lines(text.splitlines())
    async with await open_store(settings.storage.effective_database_url) as store:
        report = await import_rows(store.database, rows)
    print(f"imported {_counts(report.added)}; already present: {_counts(report.present)}")
    return 0
