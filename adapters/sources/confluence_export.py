"""A Confluence space's HTML export (zip) as documents: one per page, keyed by its page id, titled by the
page, its breadcrumb path as its heading, its main content as Markdown with links to other pages kept (the
reference index follows them), its attachments read by the usual readers; the export's navigation, page
metadata, attachment lists and footer left out.

Pages are picked apart with BeautifulSoup by the ids and classes Confluence's export writes
(breadcrumbs, title-text, main-content) and their content converted with markdownify.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from urllib.parse import unquote

from bs4 import BeautifulSoup
from markdownify import markdownify

from adapters.sources.export_zip import content_version, member_bytes, member_text, open_export
from adapters.sources.mirror import FILES
from core.errors import SourceUnreadable
from core.sources.models import SyncedDocument

_PAGE_ID = re.compile(r"(?:^|_)(\d+)\.html?$")
_ATTACHMENT = re.compile(r"^attachments/(\d+)/([^/]+)$")
PATH_SEPARATOR = " › "


def page_id(member: str) -> str | None:
    """The page id a Confluence export file name carries (Title_12345.html or 12345.html)."""
    match = _PAGE_ID.search(PurePosixPath(member).name)
    return match.group(1) if match else None


def _space_of(member: str) -> str:
    parts = PurePosixPath(member).parts
    return parts[0] if len(parts) > 1 else ""


def _title(soup: BeautifulSoup, space_name: str) -> str:
    node = soup.find(id="title-text") or soup.find("title")
    title = " ".join(node.get_text(" ").split()) if node else ""
    prefix = f"{space_name} : "
    return title[len(prefix) :] if space_name and title.startswith(prefix) else title


def _breadcrumbs(soup: BeautifulSoup) -> list[str]:
    trail = soup.find(id="breadcrumbs")
    return [" ".join(li.get_text(" ").split()) for li in trail.find_all("li")] if trail else []


def _content_markdown(soup: BeautifulSoup, space: str) -> str:
    main = soup.find(id="main-content") or soup.find("body") or soup
    for link in main.find_all("a"):
        target = page_id(unquote(str(link.get("href") or "")).split("#", 1)[0])
        if target:
            link["href"] = f"confluence:{space}/{target}"
    for image in main.find_all("img"):
        image.decompose()  # icons and pictures: nothing to search
    text = markdownify(str(main), heading_style="ATX", bullets="-")
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def page_document(html: str, *, space: str, identity: str) -> SyncedDocument | None:
    """One exported page as a document (None when it holds no text of its own)."""
    soup = BeautifulSoup(html, "html.parser")
    trail = _breadcrumbs(soup)
    title = _title(soup, trail[0] if trail else "")
    body = _content_markdown(soup, space)
    if not body:
        return None
    path = PATH_SEPARATOR.join([*trail, title])
    markdown = f"# {path}\n\n{body}"
    return SyncedDocument(f"confluence:{space}/{identity}", title, markdown, "", content_version(markdown))


def read_confluence_export(path: Path) -> tuple[list[SyncedDocument], list[tuple[str, str]]]:
    """Every page and attachment of the export, and what was left out with why (blocking)."""
    documents: list[SyncedDocument] = []
    skipped: list[tuple[str, str]] = []
    with open_export(path) as archive:
        names = archive.namelist()
        spaces = {_space_of(name) for name in names if PurePosixPath(name).name == "index.html"}
        if not spaces:
            raise SourceUnreadable(str(path), "not a Confluence HTML export (no index.html)")
        for name in names:
            space, inner = _space_of(name), PurePosixPath(*PurePosixPath(name).parts[1:]).as_posix()
            if space not in spaces:
                continue
            identity = page_id(name) if name.lower().endswith((".html", ".htm")) else None
            attached = _ATTACHMENT.match(inner)
            if identity is not None:
                document = page_document(member_text(archive, name), space=space, identity=identity)
                if document is None:
                    skipped.append((name, "no text"))
                else:
                    documents.append(document)
            elif attached is not None:
                data = member_bytes(archive, name)
                key = f"confluence:{space}/{attached.group(1)}{FILES}{attached.group(2)}"
                title = unquote(attached.group(2))
                documents.append(SyncedDocument(key, title, "", "", content_version(data), content=data))
    return documents, skipped
