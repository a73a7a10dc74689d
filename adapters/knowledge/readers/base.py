"""What every reader shares: the parsed result, the refusal with its reason, the size limits."""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.models import DocumentPart

MB = 1024 * 1024
DEFAULT_MAX_FILE_MB = 200
# A zip (an archive, or a .docx/.xlsx/.pptx, which are zips) may unpack to at most this much in total,
# and no member bigger than RATIO_MIN_BYTES may unpack to more than MAX_RATIO times its packed size:
# text and XML pack 5-20x, a zip bomb 1000x and more (Apache POI refuses 100x the same way).
DEFAULT_MAX_ARCHIVE_MB = 1024
MAX_RATIO = 100
RATIO_MIN_BYTES = 1 * MB
MAX_MEMBERS = 20_000

# A line of document text that the Markdown chunker would take for markup (a heading, a code fence):
# a leading no-break space keeps it text (chunk text is stripped, so the space never shows).
_MARKUP_START = re.compile(r"^ {0,3}(?:#{1,6}(?:[ \t]|$)|`{3,}|~{3,})")
_JUNK_TITLES = re.compile(
    r"^(?:untitled|无标题|document\d*|presentation\d*|book\d*|microsoft (?:word|powerpoint|excel) - .*|"
    r"powerpoint presentation|powerpoint 演示文稿|.*\.(?:docx?|pptx?|xlsx?|pdf|txt|rtf))$",
    re.IGNORECASE,
)


class ReadFailed(Exception):
    """The bytes cannot be read as a document; reason says why in plain words (shown to the user)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True, slots=True)
class Parsed:
    """A document as a reader found it: its parts, its own title ("" when it has none), and warnings
    about what was left out (pages without a text layer)."""

    parts: tuple[DocumentPart, ...]
    title: str = ""
    warnings: tuple[str, ...] = ()
    link: str = ""  # the web address its metadata names (front matter ``url:`` or ``link:``), else ""


@dataclass(frozen=True, slots=True)
class ReadLimits:
    """How big a file (or an archive member) may be, and how far a zip may unpack."""

    max_file_bytes: int = DEFAULT_MAX_FILE_MB * MB
    max_archive_bytes: int = DEFAULT_MAX_ARCHIVE_MB * MB
    max_ratio: int = MAX_RATIO
    max_members: int = MAX_MEMBERS


DEFAULT_LIMITS = ReadLimits()


def megabytes(size: int) -> str:
    """A size as people read it: "312.4 MB", "200 MB", "12 KB" (binary units, as the limits are set)."""
    if size < MB:
        return f"{size / 1024:.0f} KB"
    value = size / MB
    return f"{value:.0f} MB" if value.is_integer() else f"{value:.1f} MB"


def text_line(text: str) -> str:
    """One line of document text, whitespace collapsed, never read as Markdown markup."""
    line = " ".join(text.split())
    return "\u00a0" + line if _MARKUP_START.match(line) else line


def own_title(candidate: object) -> str:
    """A title from document metadata, or "" when it is blank or a tool's placeholder ("Untitled",
    "Microsoft Word - draft.docx", "PowerPoint Presentation", a file name)."""
    if not isinstance(candidate, str):
        return ""
    title = " ".join(candidate.split())
    return "" if not title or _JUNK_TITLES.match(title) else title


def described(exc: BaseException) -> str:
    """A library error in a few words, for a reason line: its message, else its class name."""
    message = " ".join(str(exc).split())
    return (message[:120] + "…" if len(message) > 120 else message) or type(exc).__name__
