"""The dataset writer locks on their own: the holder's record, release when a holder dies, the advisory lock."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from adapters.knowledge.locks.advisory_lock import PostgresWriterLocks, parse_record
from adapters.knowledge.locks.file_lock import FileWriterLocks
from adapters.knowledge.locks.holder import DatasetBusy, LockHolder
from core.errors import KnowledgeBaseError
from tests.adapters.postgres_support import POSTGRES_URL, require_postgres

ROOT = Path(__file__).resolve().parents[2]
HOLD_SCRIPT = """
import asyncio, sys
from pathlib import Path
from adapters.knowledge.locks.file_lock import FileWriterLocks

async def main():
    async with FileWriterLocks(Path(sys.argv[1]), command="kb ingest killed --dataset team").hold("team"):
        print("held", flush=True)
        await asyncio.sleep(600)

asyncio.run(main())
"""


def start_holder(directory: Path) -> subprocess.Popen[str]:
    """A process that takes dataset "team" in directory, prints "held" and sleeps."""
    return subprocess.Popen(
        [sys.executable, "-c", HOLD_SCRIPT, str(directory)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )


async def test_a_second_holder_is_refused_with_the_first_ones_pid_host_command_and_start(
    tmp_path: Path,
) -> None:
    """While one holder writes, wait=False raises DatasetBusy naming it; after it lets go the record is empty."""
    first = FileWriterLocks(tmp_path / "locks", command="kb ingest docs --dataset 法规")
    second = FileWriterLocks(tmp_path / "locks", command="kb docs delete x --dataset 法规")
    async with first.hold("法规"):
        holder = await second.holder("法规")
        assert (
            holder is not None
            and holder.pid == os.getpid()
            and holder.command == "kb ingest docs --dataset 法规"
        )
        with pytest.raises(DatasetBusy) as refused:
            async with second.hold("法规", wait=False):
                pytest.fail("two holders at once")
        assert f"pid {os.getpid()} on " in refused.value.message(
            "en"
        ) and "`kb ingest docs --dataset 法规`" in refused.value.message("en")
        async with second.hold("other dataset", wait=False):
            pass  # another dataset is free
    assert first.path("法规").read_text(encoding="utf-8") == ""
    assert await second.holder("法规") is None
    async with second.hold("法规", wait=False):
        pass


async def test_a_waiting_holder_is_told_who_it_waits_for_and_enters_when_released(tmp_path: Path) -> None:
    """wait=True calls on_wait with the holder, keeps waiting while it holds, and enters once it lets go."""
    first = FileWriterLocks(tmp_path / "locks", command="kb ingest a --dataset team")
    second = FileWriterLocks(tmp_path / "locks", command="kb ingest b --dataset team")
    seen: list[LockHolder | None] = []
    entered = asyncio.Event()

    async def wait_then_write() -> None:
        async with second.hold("team", on_wait=seen.append):
            entered.set()

    async with first.hold("team"):
        waiter = asyncio.create_task(wait_then_write())
        await asyncio.sleep(0.6)
        assert not entered.is_set()
        assert [holder.command if holder else None for holder in seen] == ["kb ingest a --dataset team"]
    await asyncio.wait_for(waiter, 5)
    assert entered.is_set()


async def test_a_killed_writer_leaves_no_lock_behind(tmp_path: Path) -> None:
    """kill -9 of the holding process releases the lock at once (the kernel drops the flock); its stale
    record is not reported as a holder."""
    locks = FileWriterLocks(tmp_path / "locks", command="kb ingest next --dataset team")
    holder = start_holder(tmp_path / "locks")
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(DatasetBusy) as refused:
            async with locks.hold("team", wait=False):
                pass
        assert f"pid {holder.pid} on " in refused.value.message("en")
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=10)
    finally:
        if holder.poll() is None:
            holder.kill()
    assert await locks.holder("team") is None  # the record names a process that is gone
    async with locks.hold("team", wait=False):
        assert (await locks.holder("team")) is not None


async def test_an_unusable_lock_folder_is_one_error_naming_the_file(tmp_path: Path) -> None:
    """A lock folder that cannot be created gives a KnowledgeBaseError naming the path, not a traceback."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x", encoding="utf-8")
    locks = FileWriterLocks(blocker / "locks", command="kb ingest")
    with pytest.raises(KnowledgeBaseError) as failed:
        async with locks.hold("team"):
            pass
    assert str(blocker / "locks") in failed.value.message("en")


def test_the_advisory_record_parses_back_from_the_statement_or_the_application_name() -> None:
    """The holder comes back from the lock statement's comment, else from the ASCII application_name."""
    holder = LockHolder(pid=42, host="box", command="kb ingest */ --dataset 法规", since=1700000000.0)
    from adapters.knowledge.locks.advisory_lock import application_name, lock_statement

    assert "*/ --" not in lock_statement(holder).split("/*", 1)[1][:-3]  # the comment cannot be closed early
    assert parse_record(application_name(holder), lock_statement(holder)) == holder
    fallback = parse_record(application_name(holder), None)
    assert fallback is not None and (fallback.pid, fallback.host, fallback.since) == (42, "box", 1700000000.0)
    assert parse_record("psql", "SELECT 1") is None


async def test_two_machines_share_one_writer_per_dataset_through_postgres() -> None:
    """Two PostgresWriterLocks (two machines): the second is refused naming the first, waits, then enters."""
    await require_postgres()
    dataset = f"法规-{uuid.uuid4().hex[:8]}"  # advisory locks are database-wide
    first = PostgresWriterLocks(POSTGRES_URL, command=f"kb ingest laws --dataset {dataset}")
    second = PostgresWriterLocks(POSTGRES_URL, command=f"kb docs delete x --dataset {dataset}")
    seen: list[LockHolder | None] = []
    async with first.hold(dataset):
        holder = await second.holder(dataset)
        assert holder is not None and holder.command == f"kb ingest laws --dataset {dataset}"
        with pytest.raises(DatasetBusy) as refused:
            async with second.hold(dataset, wait=False):
                pytest.fail("two holders at once")
        assert f"`kb ingest laws --dataset {dataset}`" in refused.value.message("en")
        started = time.monotonic()

        async def wait_then_write() -> float:
            async with second.hold(dataset, on_wait=seen.append):
                return time.monotonic() - started

        waiter = asyncio.create_task(wait_then_write())
        await asyncio.sleep(0.6)
        assert not waiter.done() and len(seen) == 1
    assert await asyncio.wait_for(waiter, 10) >= 0.6
    assert await second.holder(dataset) is None
