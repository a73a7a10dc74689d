"""Worker processes for CPU-bound Python work that must run beside embedded Chroma's writes.

Embedded Chroma holds the GIL for a whole upsert (measured: no other thread ran during a 1 s upsert),
so jieba tokenising and ingestion's reading and chunking only overlap with the writes in another
process. WorkerPool starts WORKER_PROCESSES spawned processes on first use (forking a process that
runs Chroma's threads is unsafe), at low priority so the writing (and serving) process wins the CPU
when both want it. Results come back through files, not the pool's pipe: a worker sending a large
result over the pipe blocks until the writing process reads it, which it cannot do during an upsert
(measured: workers spent ~13 % of their time blocked that way).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import multiprocessing as mp
import os
import shutil
import tempfile
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from adapters.embedders.handoff import load_and_remove, result_to_file
from adapters.knowledge.keywords.tokens import tokenise_texts

log = logging.getLogger(__name__)
T = TypeVar("T")
# Two on this 2-core machine (measured at 100k chunks, other settings equal: one worker 863 chunks/s,
# the writer waiting 18 s for it; two 922); more would add ~150 MB each (jieba's dictionary) unmeasured.
WORKER_PROCESSES = max(1, min(2, os.cpu_count() or 1))
WORKER_NICENESS = 19  # measured at 100k chunks: nice 19 -> 963-969 chunks/s, nice 5 -> 864-922


def _lower_priority() -> None:
    """Worker initializer: yield the CPU to the writing (and serving) process when both want it."""
    nice = getattr(os, "nice", None)  # POSIX only
    if nice is not None:
        with contextlib.suppress(OSError):
            nice(WORKER_NICENESS)


def _start(processes: int) -> ProcessPoolExecutor:
    """The pool, with every process spawned and jieba's dictionary loaded (about a second)."""
    pool = ProcessPoolExecutor(
        max_workers=processes, mp_context=mp.get_context("spawn"), initializer=_lower_priority
    )
    for future in [pool.submit(tokenise_texts, ["预热"]) for _ in range(processes)]:
        future.result()
    return pool


def _call_to_file(function: Callable[..., Any], args: tuple[Any, ...], directory: str) -> str:
    """In the worker: function(*args), handed back through a file under directory (embedders/handoff.py)."""
    return result_to_file(function(*args), directory)


class WorkerPool:
    """Runs picklable top-level functions in worker processes; in threads when disabled or broken."""

    def __init__(self, *, processes: int = WORKER_PROCESSES, enabled: bool = True) -> None:
        self._processes = max(1, processes)
        self._enabled = enabled
        self._starting: asyncio.Future[ProcessPoolExecutor] | None = None
        self._directory: str | None = None

    async def run(self, function: Callable[..., T], /, *args: Any) -> T:
        """function(*args) in a worker process (function and args picklable), else in a thread.

        The first call starts the processes (~1 s: spawn, imports, jieba's dictionary).
        """
        starting = self._start_soon()
        if starting is not None:
            try:
                pool = await asyncio.shield(starting)
                assert self._directory is not None
                call = functools.partial(_call_to_file, function, args, self._directory)
                path = await asyncio.get_running_loop().run_in_executor(pool, call)
                result: T = await asyncio.to_thread(load_and_remove, path)
                return result
            except (BrokenProcessPool, OSError) as exc:
                log.warning("worker process failed (%s); continuing in threads", exc)
                self._enabled = False
        return await asyncio.to_thread(function, *args)

    def _start_soon(self) -> asyncio.Future[ProcessPoolExecutor] | None:
        """The pool's start, begun on first use in a thread (spawning on the loop would stall it)."""
        if not self._enabled:
            return None
        if self._starting is None:
            self._directory = tempfile.mkdtemp(prefix="kb-workers-")
            self._starting = asyncio.ensure_future(asyncio.to_thread(_start, self._processes))
        return self._starting

    async def close(self) -> None:
        """Stop the processes and remove their result files."""
        starting, self._starting = self._starting, None
        if starting is not None:
            with contextlib.suppress(BrokenProcessPool, OSError):
                pool = await starting
                await asyncio.to_thread(pool.shutdown)
        if self._directory is not None:
            directory, self._directory = self._directory, None
            await asyncio.to_thread(shutil.rmtree, directory, True)
