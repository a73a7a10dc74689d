"""The conversation schema as an ordered list of versioned migrations, applied at open.

`schema_version` records each applied migration. Opening a database applies the missing ones, in order,
in one transaction (serialised across processes), so an old file or schema is upgraded in place and a
second open applies nothing. To change the schema, append a Migration with the next version number;
never edit one that has shipped. DDL templates use $ID, $JSON, $REAL and $BIGINT for dialect types.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from adapters.store.database import Database
from adapters.store.errors import StoreUnavailable


@dataclass(frozen=True, slots=True)
class Migration:
    """One schema step: its version (1, 2, ...), a name, and DDL templates run in order."""

    version: int
    name: str
    statements: tuple[str, ...]


_CONVERSATIONS = """
CREATE TABLE conversations (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    team_id TEXT NOT NULL DEFAULT '',
    channel_id TEXT NOT NULL DEFAULT '',
    thread_ts TEXT NOT NULL DEFAULT '',
    created_at $REAL NOT NULL
)"""

# answer is NULL exactly while a record is not answered, so "answer IS NOT NULL" (the partial index's
# predicate) and "status = 'answered'" can never disagree.
_RECORDS = """
CREATE TABLE records (
    id $ID,
    conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    question TEXT NOT NULL,
    rewritten TEXT,
    answer TEXT,
    status TEXT NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'answered', 'failed', 'interrupted')),
    details $JSON NOT NULL DEFAULT '{}',
    event_key TEXT UNIQUE,
    reply_ref TEXT,
    created_at $REAL NOT NULL,
    updated_at $REAL NOT NULL,
    CHECK ((answer IS NOT NULL) = (status = 'answered'))
)"""

_CONTEXT = """
CREATE TABLE conversation_context (
    conversation_id TEXT PRIMARY KEY REFERENCES conversations (id) ON DELETE CASCADE,
    summary TEXT NOT NULL DEFAULT '',
    through_record_id $BIGINT NOT NULL DEFAULT 0,
    compacted_rounds INTEGER NOT NULL DEFAULT 0,
    revision INTEGER NOT NULL DEFAULT 0,
    updated_at $REAL NOT NULL
)"""

# A record's delivery to the chat it came from (NULL: not delivered to a chat, e.g. the CLI). delivery_due is
# when a re-deliverer may next take it: a lease while an instance is delivering, a backoff after a failure.
_DELIVERY_COLUMNS = (
    "ALTER TABLE records ADD COLUMN delivery TEXT"
    " CHECK (delivery IN ('pending', 'placeholder', 'delivered', 'failed'))",
    "ALTER TABLE records ADD COLUMN delivery_attempts INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE records ADD COLUMN delivery_error TEXT NOT NULL DEFAULT ''",
    "ALTER TABLE records ADD COLUMN delivery_due $REAL NOT NULL DEFAULT 0",
    "ALTER TABLE records ADD COLUMN delivery_parts INTEGER NOT NULL DEFAULT 0",
)

# Event ids and message keys already taken by some instance (duplicate deliveries are dropped before any
# chat call); record_id is the record the event became, if it became one.
_EVENT_CLAIMS = """
CREATE TABLE event_claims (
    key TEXT PRIMARY KEY,
    record_id $BIGINT REFERENCES records (id) ON DELETE CASCADE,
    created_at $REAL NOT NULL
)"""

# Synced sources (core.sources), shared by every instance: settings, versions and the last report are
# JSON text (read and written whole); sync_owner / sync_until are the claim that keeps one sync per source.
_SOURCES = """
CREATE TABLE sources (
    name TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    dataset TEXT NOT NULL,
    settings TEXT NOT NULL DEFAULT '{}',
    every_seconds $REAL NOT NULL DEFAULT 0,
    versions TEXT NOT NULL DEFAULT '{}',
    last_sync TEXT,
    sync_owner TEXT NOT NULL DEFAULT '',
    sync_until $REAL NOT NULL DEFAULT 0,
    created_at $REAL NOT NULL
)"""

MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "conversations, records, conversation context",
        (
            _CONVERSATIONS,
            _RECORDS,
            _CONTEXT,
            # History and compaction read id ranges of answered records in one conversation.
            "CREATE INDEX idx_records_answered ON records (conversation_id, id) WHERE answer IS NOT NULL",
            # list_records (all statuses) and the foreign key.
            "CREATE INDEX idx_records_conversation ON records (conversation_id, id)",
            # pending_records at start-up (crash recovery).
            "CREATE INDEX idx_records_status ON records (status)",
        ),
    ),
    Migration(
        2,
        "conversation scope: datasets and modes fixed at the first question",
        # NULL until the first question stores it (ConversationStore.save_scope: the first write wins).
        ("ALTER TABLE conversations ADD COLUMN scope $JSON",),
    ),
    Migration(
        3,
        "record delivery state, event claims",
        (
            *_DELIVERY_COLUMNS,
            # The re-deliverer's scan: undelivered records by due time.
            "CREATE INDEX idx_records_delivery_due ON records (delivery_due)"
            " WHERE delivery IN ('pending', 'placeholder')",
            _EVENT_CLAIMS,
            "CREATE INDEX idx_event_claims_created ON event_claims (created_at)",
        ),
    ),
    Migration(
        4,
        "who asked each record",
        (
            # NULL for questions from the CLI and for records stored before this version.
            "ALTER TABLE records ADD COLUMN asked_by TEXT",
            # recent_questions: a person's latest records (the Slack App Home).
            "CREATE INDEX idx_records_asked_by ON records (asked_by, id) WHERE asked_by IS NOT NULL",
        ),
    ),
    Migration(
        5,
        "where each record's answer is delivered",
        # NULL for questions answered in the terminal; a front end's address (Slack: "channel:thread_ts").
        ("ALTER TABLE records ADD COLUMN reply_to TEXT",),
    ),
    Migration(
        6,
        "unconfirmed reply starts and resumed answers",
        (
            # When a reply's first message (placeholder, stream start) was sent and its ts is not known yet;
            # 0 when none is outstanding. After a crash the Slack adapter looks for that message first.
            "ALTER TABLE records ADD COLUMN delivery_starting_at $REAL NOT NULL DEFAULT 0",
            # How often an interrupted question was answered again (it is answered again once).
            "ALTER TABLE records ADD COLUMN delivery_resumes INTEGER NOT NULL DEFAULT 0",
        ),
    ),
    Migration(7, "synced sources", (_SOURCES,)),
)

_VERSION_TABLE = """
CREATE TABLE IF NOT EXISTS schema_version (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at $REAL NOT NULL
)"""


def check_migrations(migrations: Sequence[Migration]) -> None:
    """Versions must be 1, 2, 3, ... in order (a gap or a duplicate is a programming error)."""
    versions = [migration.version for migration in migrations]
    if versions != list(range(1, len(versions) + 1)):
        raise ValueError(f"migration versions must be 1..n in order, got {versions}")


async def migrate(database: Database, migrations: Sequence[Migration] = MIGRATIONS) -> list[int]:
    """Apply the migrations missing from schema_version in one transaction; returns the versions applied.

    Raises StoreUnavailable when the database was migrated by a newer program (unknown versions).
    """
    check_migrations(migrations)
    dialect = database.dialect
    async with database.transaction() as transaction:
        if dialect.migration_lock:
            await transaction.fetch(dialect.migration_lock)
        await transaction.fetch(dialect.ddl(_VERSION_TABLE))
        rows = await transaction.fetch("SELECT version FROM schema_version")
        applied = {int(row["version"]) for row in rows}
        newest = max(applied, default=0)
        if newest > len(migrations):
            raise StoreUnavailable(
                f"database schema version {newest} is newer than this program's ({len(migrations)}); "
                "upgrade the bot before using this database"
            )
        done: list[int] = []
        for migration in migrations:
            if migration.version in applied:
                continue
            for statement in migration.statements:
                await transaction.fetch(dialect.ddl(statement))
            await transaction.fetch(
                "INSERT INTO schema_version (version, name, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.name, time.time()),
            )
            done.append(migration.version)
    return done
