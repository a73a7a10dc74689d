"""Plain text and Markdown: decoding (UTF-8, UTF-16 with a BOM, GB18030), binary detection, titles."""

from __future__ import annotations

import re

from adapters.knowledge.readers.base import Parsed, ReadFailed
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


def markdown_title(markdown: str) -> str:
    """The document's own title: its first level-1 heading outside code fences, else its first heading
    of any level; without inline HTML comments; "" when it has no heading."""
    searchable = _FENCE.sub("", markdown)
    for pattern in (_H1, _HEADING):
        for match in pattern.finditer(searchable):
            title = " ".join(_COMMENT.sub("", match.group(1)).split())
            if title:
                return title
    return ""


def read_markdown(text: str) -> Parsed:
    """A Markdown file as one part, titled by its first level-1 heading (else its first heading)."""
    return Parsed((DocumentPart(text),), title=markdown_title(text))


def read_plain(text: str) -> Parsed:
    """A text file as one part, with no title of its own."""
    return Parsed((DocumentPart(text),))
