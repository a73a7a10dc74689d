"""One writer per dataset on the command line: commands that change a dataset hold its writer lock.

`kb ingest`, `kb docs delete|disable|enable` and `kb datasets drop|rebuild` run inside
held_for_writing: while another process writes the dataset they print one line naming it and wait,
or, with --no-wait, fail at once (exit 1, one `error:` line). Searches never take the lock, so
`kb serve`, `kb search` and `kb ask` keep working during an ingest (adapters.knowledge.locks).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from adapters.knowledge.factory import writer_locks
from adapters.knowledge.locks.holder import LockHolder, holder_text
from bot.settings import Settings


def add_no_wait(parser: Any) -> None:
    """The --no-wait flag of a command that writes a dataset."""
    parser.add_argument(
        "--no-wait",
        action="store_true",
        help="fail at once (exit 1) if another process is writing the dataset, instead of waiting",
    )


def command_line(args: argparse.Namespace) -> str:
    """The command as typed (bot.cli.main records it), for the lock holder's record."""
    argv = getattr(args, "argv", None)
    return shlex.join(["kb", *(argv if argv is not None else sys.argv[1:])])


def waiting_line(dataset: str, holder: LockHolder | None) -> str:
    """The line a writer prints when it starts waiting for a dataset."""
    return f"waiting for dataset «{dataset}»: it is being written by {holder_text(holder)}"


@asynccontextmanager
async def held_for_writing(args: argparse.Namespace, settings: Settings, dataset: str) -> AsyncIterator[None]:
    """Hold the dataset's writer lock: wait with a line naming the holder, or DatasetBusy with --no-wait."""
    locks = writer_locks(settings, command=command_line(args))

    def on_wait(holder: LockHolder | None) -> None:
        print(waiting_line(dataset, holder), file=sys.stderr, flush=True)

    try:
        async with locks.hold(dataset, wait=not getattr(args, "no_wait", False), on_wait=on_wait):
            yield
    finally:
        await locks.close()
