"""Plain text and Markdown: decoding (UTF-8, UTF-16 with a BOM, GB18030), binary detection, titles."""

from __future__ import annotations

import re

from adapters.knowledge.readers.base import Parsed, ReadFailed
from adapters.knowledge.readers.front_matter import split_front_matter
from core.knowledge.chunking import ATTRIBUTE_LIST
from core.models import DocumentPart

_SNIFF_BYTES = 8192
_MAX_CONTROL_RATIO = 0.10
_ALLOWED_CONTROLS = frozenset(b"\t\n\r\f\b\x1b")
_H1 = re.compile(r"^#[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)


def binary_reason(head: bytes) -> str | None:
    """Why the first bytes look binary (NUL bytes, control characters), or None when they look like text."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None  # UTF-16 with a BOM: NULs are expected
    if b"\x00" in head:
        return "binary file (contains NUL bytes)"
    if head:
        controls = sum(1 for b in head if (b < 0x20 and b not in _ALLOWED_CONTROLS) or b == 0x7F)
        if controls / len(head) > _MAX_CONTROL_RATIO:
            return "binary file (too many control characters)"
    return None


def decode_text(raw: bytes) -> str:
    """Text from bytes: UTF-16 with a BOM, UTF-8 (BOM stripped), else GB18030; newlines normalised."""
    reason = binary_reason(raw[:_SNIFF_BYTES])
    if reason:
        raise ReadFailed(reason)
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
    raise ReadFailed("undecodable text (neither UTF-8 nor GB18030)")


def heading_text(raw: str) -> str:
    """A heading as read: without inline HTML comments, a trailing attribute list or extra spaces."""
    return " ".join(ATTRIBUTE_LIST.sub("", _COMMENT.sub("", raw)).split())


def _first_block(markdown: str) -> str:
    """The document's first non-blank line."""
    return next((line for line in markdown.split("\n") if line.strip()), "")


def markdown_title(markdown: str) -> str:
    """The document's own title: its metadata's title, else its first level-1 heading outside code
    fences, else a heading of any level that opens the document; "" when it has none of these."""
    return _title(*split_front_matter(markdown))


def _title(metadata: dict[str, str], body: str) -> str:
    """markdown_title of a file already split into its metadata and the text after it."""
    if title := " ".join(metadata.get("title", "").split()):
        return title
    searchable = _COMMENT.sub("", _FENCE.sub("", body))
    for match in _H1.finditer(searchable):
        if title := heading_text(match.group(1)):
            return title
    opening = _HEADING.match(_first_block(searchable))
    return heading_text(opening.group(1)) if opening else ""


def read_markdown(text: str) -> Parsed:
    """A Markdown file as one part, titled by markdown_title; a MkDocs meta header is delimited as front
    matter (``---``), which chunking leaves out, as it does YAML front matter. The metadata is parsed once."""
    metadata, body = split_front_matter(text)
    opened = text.lstrip("\ufeff")
    if metadata and not opened.startswith("---"):
        header = opened[: len(opened) - len(body)].strip("\n")
        opened = f"---\n{header}\n---\n{body}"
    return Parsed((DocumentPart(opened),), title=_title(metadata, body), link=_link(metadata))


def _link(metadata: dict[str, str]) -> str:
    """The http(s) address the metadata gives the document (``url:`` or ``link:``); "" for none or
    another scheme (a ``javascript:`` or ``file:`` address is never shown as a citation's link)."""
    for key in ("url", "link"):
        value = metadata.get(key, "").strip()
        if value.lower().startswith(("https://", "http://")) and not any(c.isspace() for c in value):
            return value
    return ""


def read_plain(text: str) -> Parsed:
    """A text file as one part, with no title of its own."""
    return Parsed((DocumentPart(text),))
