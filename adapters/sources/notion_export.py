"""A Notion workspace or page export (zip of Markdown and CSV) as documents: one per page, keyed by the page
id its file name carries (``VPN Setup 3c4d….md``), titled by its first heading, its breadcrumb (the folders
of its parent pages) as its heading, links to other pages kept as links to their ids (the reference index
follows them); databases (CSV) and attached files read by the usual readers.

Notion's Markdown needs no conversion; only the file names and link targets are Notion's own, which no
library reads, hence this module.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from urllib.parse import unquote

from adapters.sources.export_zip import content_version, member_bytes, member_text, open_export
from adapters.sources.mirror import FILES
from core.errors import SourceUnreadable
from core.sources.models import SyncedDocument

_ID = re.compile(r"\s+([0-9a-f]{32})$")
_LINK = re.compile(r"(?<!!)\[([^\[\]\n]+)\]\(([^()\s]+)\)")
_HEADING = re.compile(r"^#\s+(.+)$", re.MULTILINE)
PATH_SEPARATOR = " › "
ATTACHED = (".pdf", ".docx", ".pptx", ".xlsx", ".txt", ".html")


def split_id(stem: str) -> tuple[str, str | None]:
    """("VPN Setup", "3c4d…") from a Notion file or folder name's stem; (stem, None) without an id."""
    match = _ID.search(stem)
    return (stem[: match.start()], match.group(1)) if match else (stem, None)


def _crumbs(member: str) -> list[str]:
    """The titles of the parent pages whose folders hold this member."""
    return [split_id(part)[0] for part in PurePosixPath(member).parts[:-1] if split_id(part)[1]]


def _relinked(markdown: str) -> str:
    """Links to exported pages point at ``notion:<id>``; other links stay."""

    def swap(match: re.Match[str]) -> str:
        target = unquote(match.group(2))
        identity = (
            split_id(PurePosixPath(target).stem)[1] if target.lower().endswith((".md", ".csv")) else None
        )
        return f"[{match.group(1)}](notion:{identity})" if identity else match.group(0)

    return _LINK.sub(swap, markdown)


def page_document(member: str, text: str, identity: str) -> SyncedDocument | None:
    """One page as a document, under its breadcrumb (None when it holds nothing but its title)."""
    name = split_id(PurePosixPath(member).stem)[0]
    heading = _HEADING.search(text)
    title = heading.group(1).strip() if heading else name
    body = text[heading.end() :] if heading else text
    body = _relinked(body).strip()
    if not body:
        return None
    markdown = f"# {PATH_SEPARATOR.join([*_crumbs(member), title])}\n\n{body}"
    return SyncedDocument(f"notion:{identity}", title, markdown, "", content_version(markdown))


def read_notion_export(path: Path) -> tuple[list[SyncedDocument], list[tuple[str, str]]]:
    """Every page, database and attached file of the export, and what was left out with why (blocking)."""
    documents: list[SyncedDocument] = []
    skipped: list[tuple[str, str]] = []
    with open_export(path) as archive:
        names = [name for name in archive.namelist() if not name.endswith("/")]
        if not any(split_id(PurePosixPath(name).stem)[1] for name in names if name.endswith(".md")):
            raise SourceUnreadable(str(path), "not a Notion export (no page named with its id)")
        for name in names:
            stem, identity = split_id(PurePosixPath(name).stem)
            lowered = name.lower()
            if lowered.endswith(".md") and identity:
                document = page_document(name, member_text(archive, name), identity)
                if document is None:
                    skipped.append((name, "no text"))
                else:
                    documents.append(document)
            elif lowered.endswith(".csv") and identity:
                data = member_bytes(archive, name)
                key = f"notion:{identity}{FILES}{stem}.csv"
                documents.append(SyncedDocument(key, stem, "", "", content_version(data), content=data))
            elif lowered.endswith(ATTACHED):
                data = member_bytes(archive, name)
                owner = next(
                    (split_id(p)[1] for p in reversed(PurePosixPath(name).parts[:-1]) if split_id(p)[1]), ""
                )
                key = f"notion:{owner or 'root'}{FILES}{PurePosixPath(name).name}"
                documents.append(SyncedDocument(key, stem, "", "", content_version(data), content=data))
    return documents, skipped
