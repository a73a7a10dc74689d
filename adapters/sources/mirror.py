"""The synced documents of one source as Markdown files in a folder of KB_HOME, which `kb ingest`'s
readers read like any file: YAML front matter (title, url, key) and the text.

The folder is this machine's copy, not the truth: a machine without it fetches the documents again, and
the ingest finds their content unchanged (the document id derives from the key, not from the path).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
from collections.abc import Sequence
from pathlib import Path

import yaml

from core.sources.models import SyncedDocument

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def file_name(key: str) -> str:
    """A file name for a key: readable, safe on every file system, unique by a hash of the key."""
    digest = hashlib.sha1(key.encode("utf-8")).hexdigest()[:10]
    stem = _UNSAFE.sub("_", key).strip("._")[:80]
    return f"{stem}-{digest}.md"


def document_file(document: SyncedDocument) -> str:
    """The file's text: front matter (title, url, key) then the document's Markdown."""
    meta: dict[str, str] = {"title": document.title}
    if document.link:
        meta["url"] = document.link
    meta["key"] = document.key
    header = yaml.safe_dump(meta, allow_unicode=True, sort_keys=False, width=10_000)
    return f"---\n{header}---\n\n{document.markdown.strip()}\n"


class FolderMirror:
    """SourceMirror over one folder (created on first write)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path_of(self, key: str) -> Path:
        return self.root / file_name(key)

    async def present(self, keys: Sequence[str]) -> set[str]:
        return await asyncio.to_thread(lambda: {key for key in keys if self.path_of(key).is_file()})

    async def write(self, documents: Sequence[SyncedDocument]) -> None:
        def write_all() -> None:
            self.root.mkdir(parents=True, exist_ok=True)
            for document in documents:
                path = self.path_of(document.key)
                staged = path.with_suffix(".tmp")
                staged.write_text(document_file(document), encoding="utf-8")
                staged.replace(path)  # a reader never sees half a file

        if documents:
            await asyncio.to_thread(write_all)

    async def remove(self, keys: Sequence[str]) -> None:
        def remove_all() -> None:
            for key in keys:
                with contextlib.suppress(FileNotFoundError):
                    self.path_of(key).unlink()

        if keys:
            await asyncio.to_thread(remove_all)
