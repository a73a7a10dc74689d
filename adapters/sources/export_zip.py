"""Reading an export zip in place (Slack, Confluence, Notion): member by member, each within a size limit,
never unpacked to disk; a zip that cannot be read is SourceUnreadable."""

from __future__ import annotations

import asyncio
import hashlib
import zipfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from core.errors import SourceUnreadable
from core.sources.models import Fetched, SyncedDocument

MAX_MEMBER_BYTES = 64 * 1024 * 1024


@contextmanager
def open_export(path: Path) -> Iterator[zipfile.ZipFile]:
    """The export opened for reading; SourceUnreadable for a missing or corrupt zip."""
    try:
        with zipfile.ZipFile(path) as archive:
            yield archive
    except (zipfile.BadZipFile, OSError) as exc:
        raise SourceUnreadable(str(path), f"cannot read the export ({exc})") from exc


def member_bytes(archive: zipfile.ZipFile, name: str, *, limit: int = MAX_MEMBER_BYTES) -> bytes:
    """One member's bytes; SourceUnreadable when it is larger than limit (checked before reading)."""
    info = archive.getinfo(name)
    if info.file_size > limit:
        raise SourceUnreadable(name, f"member larger than {limit // (1024 * 1024)} MB")
    return archive.read(info)


def member_text(archive: zipfile.ZipFile, name: str) -> str:
    """A text member as UTF-8 (a stray invalid byte replaced, not fatal)."""
    return member_bytes(archive, name).decode("utf-8", errors="replace")


def content_version(data: bytes | str) -> str:
    """A document's version from its content: what changes exactly when the content does."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    return hashlib.sha1(raw).hexdigest()[:16]


class WholeExportFetcher:
    """SourceFetcher over an export zip read whole each time by read(path) -> (documents, skipped)."""

    def __init__(
        self, path: Path, read: Callable[[Path], tuple[list[SyncedDocument], list[tuple[str, str]]]]
    ) -> None:
        self.path = path
        self.read = read

    async def fetch(self, known: Mapping[str, str]) -> Fetched:
        documents, skipped = await asyncio.to_thread(self.read, self.path)
        return Fetched(tuple(documents), skipped=tuple(skipped))
