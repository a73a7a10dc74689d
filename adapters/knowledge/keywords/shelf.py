"""Where a keyword index's manifest and segments are kept: the Shelf port and its folder implementation.

The index (adapters.knowledge.keywords.index) always reads segments from a local folder, memory-mapped; a
shelf says which manifest is current, keeps writers one at a time, and, when the index is shared by
machines (postgres_shelf.py), carries segment files between the database and that folder. On one machine
the folder is the shelf: the manifest is a file replaced atomically, writers take an flock.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import threading
from collections.abc import Hashable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Protocol

MANIFEST = "manifest.json"


class Shelf(Protocol):
    """The shared state of one dataset's keyword index (every method blocks)."""

    where: str  # for messages: the folder, or the database

    def stamp(self) -> Hashable | None:
        """Something that changes whenever the manifest does; None when none is saved."""
        ...

    def read(self) -> dict[str, Any] | None:
        """The saved manifest; None when there is none or it cannot be read."""
        ...

    def holding(self) -> AbstractContextManager[None]:
        """Writers one at a time: read, put and write happen inside."""
        ...

    def write(self, manifest: dict[str, Any]) -> Hashable | None:
        """Replace the manifest (inside holding()); returns the new stamp."""
        ...

    def fetch(self, name: str, folder: Path) -> None:
        """Make segment name's files present in folder (they are immutable: present means current)."""
        ...

    def put(self, name: str, folder: Path) -> None:
        """Publish the segment files in folder under name (inside holding(), before the manifest names it)."""
        ...

    def clear(self) -> None:
        """Delete the saved index (the dataset is dropped or rebuilt)."""
        ...

    def close(self) -> None:
        """Release what the shelf holds open."""
        ...


class FolderShelf:
    """The manifest as a file in the index's folder, writers serialised by an flock beside it."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.where = str(directory)

    def stamp(self) -> Hashable | None:
        try:
            status = (self.directory / MANIFEST).stat()
        except OSError:
            return None
        return status.st_mtime_ns, status.st_size, status.st_ino

    def read(self) -> dict[str, Any] | None:
        try:
            manifest = json.loads((self.directory / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return manifest if isinstance(manifest, dict) else None

    @contextmanager
    def holding(self) -> Iterator[None]:
        self.directory.mkdir(parents=True, exist_ok=True)
        with (self.directory / "manifest.lock").open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def write(self, manifest: dict[str, Any]) -> Hashable | None:
        staging = self.directory / f"{MANIFEST}.tmp-{os.getpid()}-{threading.get_ident()}"
        staging.write_text(json.dumps(manifest), encoding="utf-8")
        os.replace(staging, self.directory / MANIFEST)
        return self.stamp()

    def fetch(self, name: str, folder: Path) -> None:
        """Nothing to carry: the segment was written into this very folder."""

    def put(self, name: str, folder: Path) -> None:
        """Nothing to carry: the segment was written into this very folder."""

    def clear(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)

    def close(self) -> None:
        """Nothing is held open."""
