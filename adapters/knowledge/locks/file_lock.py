"""The dataset writer lock of one machine: a file per dataset under KB_HOME/locks, locked with flock.

Why flock (the filelock library's FileLock in its native mode): the kernel releases the lock when the
holder's file descriptor is closed, and that happens however the process ends (an exception, Ctrl-C,
kill -9, a segfault), so a dead writer never leaves its dataset locked and there is no stale lock to
clean up. A soft lock (a marker file whose existence is the lock) would outlive a killed writer, so
FileLock's fallback to one on filesystems without flock is turned off: there taking the lock fails
with an error naming the file. flock only excludes processes of one machine: writers on several
machines (a Chroma server) need the PostgreSQL advisory lock (adapters.knowledge.locks.advisory_lock).

The holder's record (LockHolder as JSON) is written into the locked file right after the lock is
taken (FileLock's on_acquired hook) and emptied before it is released; a waiting writer reads it
without locking, so it can say whom it waits for.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from adapters.knowledge.chroma.catalog import collection_name
from adapters.knowledge.locks.holder import LockHolder, OnWait, take_in_turn
from core.errors import KnowledgeBaseError
from core.messages import phrase

LOCK_SUFFIX = ".lock"


def _write_record(record: bytes, descriptor: int) -> None:
    """on_acquired: replace the locked file's content with the holder's record."""
    os.ftruncate(descriptor, 0)
    os.pwrite(descriptor, record, 0)


def _clear_record(path: Path) -> None:
    with contextlib.suppress(OSError), path.open("r+b") as handle:
        handle.truncate()


def _alive_here(holder: LockHolder) -> bool:
    """False only when the holder ran on this host and its process is gone (a record left by a crash)."""
    import socket

    if holder.host != socket.gethostname():
        return True
    try:
        os.kill(holder.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class FileWriterLocks:
    """WriterLocks on one machine: KB_HOME/locks/<dataset's collection name>.lock, flock'ed while written."""

    def __init__(self, directory: Path, *, command: str) -> None:
        """directory: where the lock files live (created on first use); command: this process's command line."""
        self.directory = directory
        self._command = command

    def path(self, dataset: str) -> Path:
        """The lock file of a dataset (named like its Chroma collection, so any name is a safe file name)."""
        return self.directory / f"{collection_name(dataset)}{LOCK_SUFFIX}"

    def _lock(self, path: Path, holder: LockHolder) -> FileLock:
        record = holder.to_json().encode("utf-8")
        return FileLock(
            path,
            blocking=False,
            thread_local=False,
            fallback_to_soft=False,
            on_acquired=lambda descriptor: _write_record(record, descriptor),
        )

    @asynccontextmanager
    async def hold(
        self, dataset: str, *, wait: bool = True, on_wait: OnWait | None = None
    ) -> AsyncIterator[None]:
        """Hold the dataset for writing (see WriterLocks.hold)."""
        path = self.path(dataset)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise _unusable(path, exc) from exc
        lock = self._lock(path, LockHolder.current(self._command))

        async def try_take() -> bool:
            try:
                lock.acquire()
            except Timeout:
                return False
            except OSError as exc:
                raise _unusable(path, exc) from exc
            return True

        async def read_holder() -> LockHolder | None:
            return await self.holder(dataset)

        await take_in_turn(dataset, try_take, read_holder, wait=wait, on_wait=on_wait)
        try:
            yield
        finally:
            _clear_record(path)
            lock.release()

    async def holder(self, dataset: str) -> LockHolder | None:
        """The record in the dataset's lock file, unless it is empty or left by a process that is gone."""
        try:
            text = self.path(dataset).read_text(encoding="utf-8")
        except OSError:
            return None
        holder = LockHolder.from_json(text) if text.strip() else None
        return holder if holder is not None and _alive_here(holder) else None

    async def close(self) -> None:
        """Nothing to close: each hold opens and closes its own file."""


def _unusable(path: Path, exc: OSError) -> KnowledgeBaseError:
    return KnowledgeBaseError(
        phrase("error.writer_lock_unusable", path=path, reason=exc.strerror or exc), detail=repr(exc)
    )
