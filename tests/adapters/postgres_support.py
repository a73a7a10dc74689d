"""PostgreSQL for adapter tests: the server URL, the skip-or-fail policy, and throwaway schemas."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
import pytest

# Read at import: the autouse fixture in tests/conftest.py clears KB_* variables inside each test.
POSTGRES_URL = os.environ.get("KB_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
REQUIRE_POSTGRES = os.environ.get("KB_REQUIRE_POSTGRES", "") == "1"

_reachable: dict[str, str | None] = {}  # url -> None when reachable, else why not


async def require_postgres() -> None:
    """Skip the test when PostgreSQL is unreachable, or fail it loudly when KB_REQUIRE_POSTGRES=1 (CI)."""
    if POSTGRES_URL not in _reachable:
        try:
            connection = await asyncpg.connect(POSTGRES_URL, timeout=3)
        except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
            _reachable[POSTGRES_URL] = f"{type(exc).__name__}: {exc}"
        else:
            await connection.close()
            _reachable[POSTGRES_URL] = None
    problem = _reachable[POSTGRES_URL]
    if problem is not None:
        message = f"PostgreSQL at {POSTGRES_URL.rsplit('@', 1)[-1]} is unreachable ({problem})"
        if REQUIRE_POSTGRES:
            pytest.fail(f"{message}, and KB_REQUIRE_POSTGRES=1 requires it")
        pytest.skip(message)


@asynccontextmanager
async def isolated_schema() -> AsyncIterator[str]:
    """A fresh schema (t_<uuid>) for one test, dropped with everything in it afterwards."""
    await require_postgres()
    name = f"t_{uuid.uuid4().hex}"
    admin = await asyncpg.connect(POSTGRES_URL, timeout=5)
    try:
        await admin.execute(f'CREATE SCHEMA "{name}"')
        yield name
    finally:
        await admin.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
        await admin.close()
