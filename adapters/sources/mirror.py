"""The synced documents of one source as files in a folder of KB_HOME, which `kb ingest`'s readers read like
any file: Markdown with YAML front matter (title, url, key), or an attachment's own bytes.

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
FILES = "/files/"  # in a key: what follows is an attached file's own name (SyncedDocument.content)


def file_name(key: str) -> str:
    """A file's place for a key, safe on every file system and unique by a hash of the key: an attached
    file's key (``…/files/vpn-guide.pdf``, see FILES) keeps its name in a folder of its own, so a reader
    falls back on it as the title; any other key is a readable ``.md`` name."""
    digest = hashlib.sha1(key.encode("utf-8")).hexdigest()[:10]
    head, marker, last = key.rpartition(FILES)
    if marker and head and last:
        return f"{digest}/{_UNSAFE.sub('_', last).strip('_')[-100:]}"
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
            for document in documents:
                path = self.path_of(document.key)
                path.parent.mkdir(parents=True, exist_ok=True)
                staged = path.with_name(path.name + ".tmp")
                if document.content is not None:
                    staged.write_bytes(document.content)
                else:
                    staged.write_text(document_file(document), encoding="utf-8")
                staged.replace(path)  # a reader never sees half a file

        if documents:
            await asyncio.to_thread(write_all)

    async def remove(self, keys: Sequence[str]) -> None:
        def remove_all() -> None:
            for key in keys:
                path = self.path_of(key)
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                if path.parent != self.root:
                    with contextlib.suppress(OSError):
                        path.parent.rmdir()  # an attachment's own folder, now empty

        if keys:
            await asyncio.to_thread(remove_all)
