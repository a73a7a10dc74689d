"""Who is writing a dataset (pid, host, command, since), the error of a writer that would not wait, the wait.

Every writer lock (adapters.knowledge.locks.file_lock, adapters.knowledge.locks.advisory_lock) records a
LockHolder when it takes a dataset, so a second writer can say who it is waiting for, or, with
``--no-wait``, fail at once naming them (DatasetBusy, exit 1).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import socket
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import asdict, dataclass
from typing import Protocol

from core.errors import KnowledgeBaseError
from core.messages import phrase

POLL_SECONDS = 0.2  # how often a waiting writer tries again
COMMAND_LIMIT = 200  # characters of the holder's command line kept in its record


@dataclass(frozen=True, slots=True)
class LockHolder:
    """The process writing a dataset: its pid and host, its command line, and since when (epoch seconds)."""

    pid: int
    host: str
    command: str
    since: float

    @classmethod
    def current(cls, command: str) -> LockHolder:
        """This process, about to write, doing `command`."""
        return cls(
            pid=os.getpid(), host=socket.gethostname(), command=command[:COMMAND_LIMIT], since=time.time()
        )

    def describe(self) -> str:
        """`pid 123 on host, `kb ingest docs --dataset laws`, since 2025-01-02 10:11:12`."""
        since = dt.datetime.fromtimestamp(self.since).strftime("%Y-%m-%d %H:%M:%S")
        return f"pid {self.pid} on {self.host}, `{self.command}`, since {since}"

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> LockHolder | None:
        """The holder a lock's record names; None for an empty or unreadable record."""
        try:
            data = json.loads(text)
            return cls(
                pid=int(data["pid"]),
                host=str(data["host"]),
                command=str(data["command"]),
                since=float(data["since"]),
            )
        except (ValueError, KeyError, TypeError):
            return None


def holder_text(holder: LockHolder | None) -> str:
    return holder.describe() if holder is not None else "another process (it left no record)"


class DatasetBusy(KnowledgeBaseError):
    """Another process is writing the dataset and the caller chose not to wait (`--no-wait`)."""

    code = "dataset_busy"

    def __init__(self, dataset: str, holder: LockHolder | None) -> None:
        if holder is None:
            super().__init__(phrase("error.dataset_busy_unrecorded", dataset=dataset))
        else:
            super().__init__(phrase("error.dataset_busy", dataset=dataset, holder=holder.describe()))
        self.dataset = dataset
        self.holder = holder


OnWait = Callable[[LockHolder | None], object]


class WriterLocks(Protocol):
    """One writer per dataset: hold(dataset) waits (or fails at once) while another process writes it."""

    def hold(
        self, dataset: str, *, wait: bool = True, on_wait: OnWait | None = None
    ) -> AbstractAsyncContextManager[None]:
        """Hold the dataset for writing; wait=False raises DatasetBusy when it is held.

        on_wait(holder) is called when the caller starts waiting, and again when the holder changes.
        """
        ...

    async def holder(self, dataset: str) -> LockHolder | None:
        """Who holds the dataset now (None when nobody does, or nobody left a record)."""
        ...

    async def close(self) -> None: ...


async def take_in_turn(
    dataset: str,
    try_take: Callable[[], Awaitable[bool]],
    read_holder: Callable[[], Awaitable[LockHolder | None]],
    *,
    wait: bool,
    on_wait: OnWait | None,
) -> None:
    """Take a lock with try_take (True when taken): at once, else DatasetBusy or a wait that says who for.

    The wait polls (POLL_SECONDS), so Ctrl-C ends it at once and no thread is left blocked in the kernel.
    """
    if await try_take():
        return
    holder = await read_holder()
    if not wait:
        raise DatasetBusy(dataset, holder)
    if on_wait is not None:
        on_wait(holder)
    while not await try_take():
        await asyncio.sleep(POLL_SECONDS)
        current = await read_holder()
        if current is not None and current != holder:
            holder = current
            if on_wait is not None:
                on_wait(holder)
