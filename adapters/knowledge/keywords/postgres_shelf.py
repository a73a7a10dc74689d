"""The keyword shelf of several machines: the manifest and every segment's files kept in PostgreSQL.

Used when Chroma is a server and the conversation store is PostgreSQL (as the writer lock is,
adapters.knowledge.locks.advisory_lock): machines share no disk, so one dataset's manifest is a row and
each segment is stored once, its folder as an uncompressed tar in parts of PART_BYTES. A machine fetches a
segment into its local folder the first time a manifest names it and memory-maps it from there; segments
never change, so that copy never goes stale. Writers are kept one at a time by a transaction-level
advisory lock, so a save's read, segment uploads and manifest write are one transaction.

The index calls the shelf from worker threads, so this shelf keeps its own event loop and one
connection (asyncpg is the project's PostgreSQL driver), used by one thread at a time.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import shutil
import tarfile
import threading
from collections.abc import Coroutine, Hashable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import asyncpg

T = TypeVar("T")
PART_BYTES = 32 * 1024 * 1024
GRACE = "10 minutes"  # a segment no manifest names is deleted after this (a machine may be fetching it)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS kb_keyword_manifests (
    key text PRIMARY KEY,
    generation bigint NOT NULL,
    manifest text NOT NULL
);
CREATE TABLE IF NOT EXISTS kb_keyword_segments (
    key text NOT NULL,
    name text NOT NULL,
    part integer NOT NULL,
    payload bytea NOT NULL,
    created timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (key, name, part)
);
"""


def _lock_key(text: str) -> int:
    digest = hashlib.blake2b(f"kb-keyword-shelf\0{text}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def _packed(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for path in sorted(folder.iterdir()):
            archive.add(path, arcname=path.name)
    return buffer.getvalue()


def _unpack(payload: bytes, folder: Path) -> None:
    """Extract a segment into folder atomically (a staging folder renamed into place)."""
    staging = folder.with_name(f"{folder.name}.fetching-{threading.get_ident()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(payload), mode="r") as archive:
        archive.extractall(staging, filter="data")
    try:
        staging.rename(folder)
    except OSError:  # another thread or process fetched it first
        shutil.rmtree(staging, ignore_errors=True)
        if not folder.exists():
            raise


class PostgresShelf:
    """One dataset's manifest and segments in PostgreSQL, identified by key (the dataset's collection name)."""

    def __init__(self, url: str, key: str) -> None:
        self._url = url
        self.key = key
        self.where = "PostgreSQL"
        self._loop = asyncio.new_event_loop()
        self._connection: asyncpg.Connection | None = None
        self._guard = threading.RLock()

    def _run(self, work: Coroutine[Any, Any, T]) -> T:
        with self._guard:
            return self._loop.run_until_complete(work)

    async def _connected(self) -> asyncpg.Connection:
        if self._connection is None or self._connection.is_closed():
            connection = await asyncpg.connect(self._url, timeout=10)
            async with connection.transaction():
                await connection.execute("SELECT pg_advisory_xact_lock($1)", _lock_key("schema"))
                await connection.execute(_SCHEMA)
            self._connection = connection
        return self._connection

    def stamp(self) -> Hashable | None:
        async def work() -> Hashable | None:
            connection = await self._connected()
            return await connection.fetchval(  # type: ignore[no-any-return]
                "SELECT generation FROM kb_keyword_manifests WHERE key = $1", self.key
            )

        return self._run(work())

    def read(self) -> dict[str, Any] | None:
        async def work() -> str | None:
            connection = await self._connected()
            return await connection.fetchval(  # type: ignore[no-any-return]
                "SELECT manifest FROM kb_keyword_manifests WHERE key = $1", self.key
            )

        text = self._run(work())
        try:
            manifest = json.loads(text) if text is not None else None
        except ValueError:
            return None
        return manifest if isinstance(manifest, dict) else None

    @contextmanager
    def holding(self) -> Iterator[None]:
        with self._guard:
            connection = self._run(self._connected())
            transaction = connection.transaction()
            self._run(transaction.start())
            try:
                self._run(connection.execute("SELECT pg_advisory_xact_lock($1)", _lock_key(self.key)))
                yield
            except BaseException:
                self._run(transaction.rollback())
                raise
            self._run(transaction.commit())

    def write(self, manifest: dict[str, Any]) -> Hashable | None:
        async def work() -> Hashable | None:
            connection = await self._connected()
            generation = await connection.fetchval(
                """INSERT INTO kb_keyword_manifests (key, generation, manifest) VALUES ($1, 1, $2)
                   ON CONFLICT (key) DO UPDATE
                   SET generation = kb_keyword_manifests.generation + 1, manifest = EXCLUDED.manifest
                   RETURNING generation""",
                self.key,
                json.dumps(manifest),
            )
            await connection.execute(
                f"""DELETE FROM kb_keyword_segments WHERE key = $1 AND NOT (name = ANY($2::text[]))
                    AND created < now() - interval '{GRACE}'""",
                self.key,
                list(manifest.get("segments", [])),
            )
            return generation  # type: ignore[no-any-return]

        return self._run(work())

    def fetch(self, name: str, folder: Path) -> None:
        if folder.exists():
            return

        async def work() -> bytes:
            connection = await self._connected()
            rows = await connection.fetch(
                "SELECT payload FROM kb_keyword_segments WHERE key = $1 AND name = $2 ORDER BY part",
                self.key,
                name,
            )
            if not rows:
                raise FileNotFoundError(f"keyword segment {name} is not in the database")
            return b"".join(row["payload"] for row in rows)

        _unpack(self._run(work()), folder)

    def put(self, name: str, folder: Path) -> None:
        payload = _packed(folder)

        async def work() -> None:
            connection = await self._connected()
            await connection.executemany(
                """INSERT INTO kb_keyword_segments (key, name, part, payload) VALUES ($1, $2, $3, $4)
                   ON CONFLICT DO NOTHING""",
                [
                    (self.key, name, number, payload[start : start + PART_BYTES])
                    for number, start in enumerate(range(0, max(len(payload), 1), PART_BYTES))
                ],
            )

        self._run(work())

    def clear(self) -> None:
        async def work() -> None:
            connection = await self._connected()
            await connection.execute("DELETE FROM kb_keyword_manifests WHERE key = $1", self.key)
            await connection.execute("DELETE FROM kb_keyword_segments WHERE key = $1", self.key)

        self._run(work())

    def close(self) -> None:
        with self._guard:
            if self._connection is not None and not self._connection.is_closed():
                self._loop.run_until_complete(self._connection.close())
            self._connection = None
            self._loop.close()
