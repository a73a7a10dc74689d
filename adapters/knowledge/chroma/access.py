"""How the knowledge base reaches Chroma: directly, or (embedded) one call at a time across processes.

Embedded Chroma is not safe with several processes on one folder, and not only for two writers
(docs/storage.md#one-call-at-a-time-on-an-embedded-chroma-folder). Measured with chromadb 1.5.9: a process that opens the folder, or merely counts, while another
writes applies the writer's pending log to the HNSW files itself (Chroma's "backfill"), so readers
write too; two processes writing those files at once lost vectors, made every later call fail with
"Failed to apply logs to the hnsw segment writer", and once grew a segment file without bound; and a
process that opened the folder before another wrote keeps querying its old HNSW copy (stale results,
and stale state it would write back) until it reopens. The dataset writer lock
(adapters.knowledge.locks) keeps two writers of one dataset apart, but `kb serve` and `kb search`
still touch the folder while `kb ingest` runs.

So EmbeddedChromaAccess runs every Chroma call of a process under one exclusive flock on
KB_HOME/locks/chroma.lock, taken for that call only (milliseconds for a search, about half a second
for a write batch, see adapters.knowledge.chroma.dataset.WRITE_BATCH: a reader waits for one batch,
never for a whole ingest), and keeps a change token in that file: after each call the caller writes a
new one; a process that finds a token it did not write reopens its client (closing the old one, which
drops its HNSW copy) before its call, and the store points its opened datasets at the new client and
reloads their catalogs. Every call therefore starts from the state the previous call, in whatever
process, left. flock rather than the filelock library used for the writer lock: this lock is taken
for every call, so the blocking kernel wait (woken the moment the holder releases) beats polling; like
the writer lock, the kernel drops it when its process dies.

ChromaAccess is the direct kind: a Chroma server (which owns its folder) or a client the caller manages.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")
TOKEN_BYTES = 8


class ChromaAccess:
    """A client used as it is: calls run at once, nothing is reopened."""

    def __init__(self, client: Any) -> None:
        self._client = client
        self.reopened: Callable[[Any], None] | None = None  # set by the store; called with a new client

    @property
    def client(self) -> Any:
        """The client; only valid inside call() for an EmbeddedChromaAccess."""
        return self._client

    def call(self, function: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """function(*args, **kwargs) (blocking: run it in a worker thread)."""
        return function(*args, **kwargs)

    def close(self) -> None:
        """Nothing to close: the caller owns the client."""


class EmbeddedChromaAccess(ChromaAccess):
    """An embedded PersistentClient shared with other processes one call at a time (module docstring)."""

    def __init__(self, path: Path, lock_path: Path, *, open_client: Callable[[Path], Any]) -> None:
        """path: the Chroma folder; lock_path: the lock file; open_client(path): a new PersistentClient."""
        super().__init__(None)
        self.path = path
        self.lock_path = lock_path
        self._open_client = open_client
        self._thread_lock = threading.Lock()
        self._descriptor: int | None = None
        self._token = b""
        self._rebind_pending = False  # a reopen whose datasets were not all pointed at the new client yet

    def call(self, function: Callable[..., T], /, *args: Any, **kwargs: Any) -> T:
        """function(*args, **kwargs) under the folder's lock, after reopening if another process called."""
        with self._thread_lock:
            descriptor = self._lock_descriptor()
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            try:
                self._current_client(descriptor)
                try:
                    return function(*args, **kwargs)
                finally:
                    self._token = os.urandom(TOKEN_BYTES)
                    os.pwrite(descriptor, self._token, 0)
            finally:
                fcntl.flock(descriptor, fcntl.LOCK_UN)

    def _lock_descriptor(self) -> int:
        if self._descriptor is None:
            self.lock_path.parent.mkdir(parents=True, exist_ok=True)
            self._descriptor = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        return self._descriptor

    def _current_client(self, descriptor: int) -> None:
        """Open the client, or reopen it when the token shows another process called since our last call."""
        current = self._client is not None and not self._rebind_pending
        if current and os.pread(descriptor, TOKEN_BYTES, 0) == self._token:
            return
        rebind = self._client is not None or self._rebind_pending
        self._close_client()
        self._client = self._open_client(self.path)
        if rebind and self.reopened is not None:
            self._rebind_pending = True  # stays set if the store's callback fails: the next call retries
            self.reopened(self._client)
            self._rebind_pending = False

    def _close_client(self) -> None:
        client, self._client = self._client, None
        close = getattr(client, "close", None)
        if close is not None:
            close()

    def close(self) -> None:
        """Close the client (its system stops) and the lock file."""
        with self._thread_lock:
            try:
                if self._client is not None and self._descriptor is not None:
                    fcntl.flock(self._descriptor, fcntl.LOCK_EX)
                    try:
                        self._close_client()
                    finally:
                        fcntl.flock(self._descriptor, fcntl.LOCK_UN)
            finally:
                if self._descriptor is not None:
                    os.close(self._descriptor)
                    self._descriptor = None
