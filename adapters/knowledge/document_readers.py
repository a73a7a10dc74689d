"""Reading Markdown, plain-text and HTML files into Markdown-ish text, and walking folders for them."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

SUPPORTED_SUFFIXES: frozenset[str] = frozenset({".md", ".markdown", ".txt", ".text", ".html", ".htm"})
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown"})
HTML_SUFFIXES = frozenset({".html", ".htm"})

_SNIFF_BYTES = 8192
_MAX_CONTROL_RATIO = 0.10
_ALLOWED_CONTROLS = frozenset(b"\t\n\r\f\b\x1b")
_MAGIC = (
    (b"%PDF", "a PDF file"),
    (b"\x89PNG", "a PNG image"),
    (b"GIF8", "a GIF image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"PK\x03\x04", "a ZIP archive (docx/xlsx/...)"),
    (b"\xd0\xcf\x11\xe0", "an old Office document"),
    (b"\x7fELF", "an executable"),
)
_H1 = re.compile(r"^#[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)


_BLOCK_TAGS = frozenset(
    "p div section article main header footer nav aside blockquote li dt dd tr table thead tbody tfoot "
    "ul ol dl figure figcaption address hr form fieldset details summary".split()
)
_HEADING_TAGS = {f"h{n}": n for n in range(1, 7)}
_DROPPED_TAGS = frozenset({"script", "style", "noscript", "template", "svg"})
_CELL_TAGS = frozenset({"td", "th"})


class _MarkdownBuilder(HTMLParser):
    """Collects HTML as blank-line separated Markdown blocks (headings, paragraphs, items, rows)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[str] = []
        self.title = ""
        self._inline: list[str] = []
        self._dropped = 0
        self._heading = 0
        self._pre = 0
        self._in_title = False
        self._title_parts: list[str] = []
        self._cells: list[str] | None = None
        self._prefix = ""

    def _flush(self) -> None:
        if self._pre:
            return
        if self._cells is not None and not self._heading:
            self._inline.append(" ")  # a block inside a table cell stays in the cell
            return
        raw = "".join(self._inline)
        self._inline = []
        text = " ".join(raw.split())
        if not text:
            return
        if self._heading:
            self.blocks.append("#" * self._heading + " " + text)
        else:
            self.blocks.append(self._prefix + text)
        self._prefix = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _DROPPED_TAGS:
            self._dropped += 1
        elif tag == "title":
            self._in_title = True
        elif tag in _HEADING_TAGS:
            self._flush()
            self._heading = _HEADING_TAGS[tag]
        elif tag == "pre":
            self._flush()
            self._pre += 1
        elif tag == "br":
            self._inline.append("\n" if self._pre else " ")
        elif tag == "tr":
            self._flush()
            self._cells = []
        elif tag in _CELL_TAGS:
            self._flush_cell()
        elif tag in _BLOCK_TAGS:
            self._flush()
            if tag == "li":
                self._prefix = "- "

    def handle_endtag(self, tag: str) -> None:
        if tag in _DROPPED_TAGS:
            self._dropped = max(0, self._dropped - 1)
        elif tag == "title":
            self._in_title = False
            self.title = self.title or " ".join("".join(self._title_parts).split())
        elif tag in _HEADING_TAGS:
            self._flush()
            self._heading = 0
        elif tag == "pre" and self._pre:
            code = "".join(self._inline).strip("\n")
            self._inline = []
            self._pre -= 1
            if code.strip():
                self.blocks.append("```\n" + code + "\n```")
        elif tag in _CELL_TAGS:
            self._flush_cell()
        elif tag == "tr":
            self._end_row()
        elif tag in _BLOCK_TAGS:
            self._flush()

    def _flush_cell(self) -> None:
        if self._cells is None:
            return
        cell = " ".join("".join(self._inline).split())
        self._inline = []
        if cell:
            self._cells.append(cell)

    def _end_row(self) -> None:
        self._flush_cell()
        if self._cells:
            self.blocks.append(" | ".join(self._cells))
        self._cells = None

    def handle_data(self, data: str) -> None:
        if self._dropped:
            return
        if self._in_title:
            self._title_parts.append(data)
            return
        self._inline.append(data)

    def close(self) -> None:
        super().close()
        if self._cells is not None:
            self._end_row()
        self._pre = 0
        self._flush()


def html_to_markdown(html: str) -> tuple[str, str]:
    """(Markdown-ish text, <title> text): h1..h6 as '#' lines, blank-line separated blocks, no scripts."""
    builder = _MarkdownBuilder()
    builder.feed(html)
    builder.close()
    markdown = "\n\n".join(builder.blocks) + ("\n" if builder.blocks else "")
    return markdown, builder.title


class UnreadableDocument(Exception):
    """A file that cannot be read as text; reason says why in plain words."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


@dataclass(frozen=True)
class ReadDocument:
    """A file read and normalised to Markdown-ish text."""

    path: Path
    name: str
    title: str
    markdown: str
    content_hash: str


def _binary_reason(head: bytes) -> str | None:
    """Why the first bytes look binary, or None when they look like text."""
    for magic, what in _MAGIC:
        if head.startswith(magic):
            return f"binary file ({what})"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None  # UTF-16 with a BOM: NULs are expected
    if b"\x00" in head:
        return "binary file (contains NUL bytes)"
    if head:
        controls = sum(1 for b in head if (b < 0x20 and b not in _ALLOWED_CONTROLS) or b == 0x7F)
        if controls / len(head) > _MAX_CONTROL_RATIO:
            return "binary file (too many control characters)"
    return None


def decode_text(raw: bytes, path: Path) -> str:
    """Text from bytes: UTF-16 with a BOM, UTF-8 (BOM stripped), else GB18030; newlines normalised."""
    reason = _binary_reason(raw[:_SNIFF_BYTES])
    if reason:
        raise UnreadableDocument(path, reason)
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        encodings: tuple[str, ...] = ("utf-16",)
    else:
        encodings = ("utf-8-sig", "gb18030")
    for encoding in encodings:
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError:
            continue
        return text.replace("\r\n", "\n").replace("\r", "\n")
    raise UnreadableDocument(path, "undecodable text (neither UTF-8 nor GB18030)")


def markdown_title(markdown: str) -> str:
    """The first level-1 heading outside code fences, without inline HTML comments, or ""."""
    searchable = _FENCE.sub("", markdown)
    for match in _H1.finditer(searchable):
        title = " ".join(_COMMENT.sub("", match.group(1)).split())
        if title:
            return title
    return ""


def read_document(path: Path) -> ReadDocument:
    """Read one supported file; raises UnreadableDocument with a reason (an empty file is fine)."""
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        supported = " ".join(sorted(SUPPORTED_SUFFIXES))
        raise UnreadableDocument(path, f"unsupported file type '{suffix or path.name}' ({supported})")
    try:
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        raise UnreadableDocument(path, "file not found") from exc
    except PermissionError as exc:
        raise UnreadableDocument(path, "permission denied") from exc
    except IsADirectoryError as exc:
        raise UnreadableDocument(path, "is a directory") from exc
    except OSError as exc:
        raise UnreadableDocument(path, f"cannot read the file ({exc.strerror or exc})") from exc
    text = decode_text(raw, path)
    if suffix in HTML_SUFFIXES:
        markdown, title = html_to_markdown(text)
        title = title or markdown_title(markdown)
    elif suffix in MARKDOWN_SUFFIXES:
        markdown = text
        title = markdown_title(markdown)
    else:
        markdown = text
        title = ""
    return ReadDocument(
        path=path,
        name=path.stem,
        title=title or path.stem,
        markdown=markdown,
        content_hash=hashlib.sha256(raw).hexdigest(),
    )


def _is_hidden(name: str) -> bool:
    return name.startswith(".")


def _walk(folder: Path) -> list[Path]:
    """Non-hidden files under folder, in sorted path order; symlinked folders not followed.

    Files of unsupported types are yielded too: read_document refuses them with a reason, so an
    ingest reports every file it did not take instead of passing over it in silence.
    """
    found: list[Path] = []
    for root, dirs, files in os.walk(folder, onerror=None):
        dirs[:] = [d for d in dirs if not _is_hidden(d)]
        for name in files:
            if not _is_hidden(name):
                found.append(Path(root) / name)
    return sorted(found, key=lambda p: p.relative_to(folder).parts)


def iter_document_paths(paths: Sequence[Path]) -> Iterator[Path]:
    """Files given and files found in folders (recursively), each once, in argument then sorted order.

    Hidden files and folders are skipped inside walks. Every other file is yielded, whatever its
    type, and so are paths given explicitly (even missing ones), so the caller can report each.
    """
    seen: set[Path] = set()
    for given in paths:
        candidates = _walk(given) if given.is_dir() else [given]
        for path in candidates:
            key = path.resolve()
            if key not in seen:
                seen.add(key)
                yield path
