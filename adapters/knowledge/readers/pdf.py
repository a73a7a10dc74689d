"""PDF with a text layer, page by page, with headings from its outline or, failing that, font sizes.

pypdf (pure Python, BSD, installs anywhere) extracts each page's text; its visitor gives every piece of
text with its font size and position, from which lines, paragraphs (a wider gap between lines) and
headings are found. Headings come from the outline (bookmarks) when the PDF has one: an entry becomes a
heading on its page, where its text is found (else at the page's top). Without an outline, short lines
set clearly larger than the body text (by character count, the most common size) are headings, larger
sizes ranking higher. A page with no text but images is a scan: it is skipped and named in a warning
(no OCR); a PDF with no text at all is refused. Encrypted PDFs open when they need no password.
"""

from __future__ import annotations

import io
import itertools
import logging
import re
import statistics
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from adapters.knowledge.readers.base import Parsed, ReadFailed, described, own_title, text_line
from core.models import DocumentPart, Location

SCANNED = "no text layer (scanned?) — OCR not supported"
_HEADING_RATIO = 1.15  # a heading's font is at least this much larger than the body's ...
_HEADING_MIN_GAIN = 1.0  # ... and at least this many points larger
_HEADING_MAX_CHARS = 120
# When more lines than this (and more than a few) look like headings, font sizes say nothing.
_MAX_HEADING_SHARE = 0.3
_FEW_HEADINGS = 10
_MAX_LEVELS = 3
_PARAGRAPH_GAP = 1.5  # a gap this many times the page's usual line gap starts a paragraph
_SENTENCE_END = re.compile(r"[。！？；.!?;:：,，、]$")
_PAGE_NUMBER = re.compile(
    r"^(?:[-–—]?\s*\d{1,4}\s*[-–—]?|page \d+(?: of \d+)?|\d+\s*/\s*\d+|第\s*\d+\s*页(?:\s*共\s*\d+\s*页)?)$",
    re.IGNORECASE,
)
_CJK = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uf900-\ufaff\uff00-\uffef]")


@dataclass
class _Line:
    text: str
    size: float
    y: float


@dataclass
class _Page:
    lines: list[_Line] = field(default_factory=list)
    has_images: bool = False


def _scale(tm: list[float], cm: list[float]) -> tuple[float, float]:
    """(font scale, baseline y) of text drawn with text matrix tm under current matrix cm."""
    _, _, c, d, e, f = tm
    a2, b2, c2, d2, _, f2 = cm
    up_x = c * a2 + d * c2  # the glyphs' vertical axis in page space
    up_y = c * b2 + d * d2
    return (up_x * up_x + up_y * up_y) ** 0.5, e * b2 + f * d2 + f2


def _page_lines(page: Any) -> list[_Line]:
    """The page's text as lines, each with its largest font size and its baseline."""
    lines: list[_Line] = []
    parts: list[str] = []
    size = 0.0
    y: float | None = None

    def visit(text: str, cm: list[float], tm: list[float], _font: Any, font_size: float) -> None:
        nonlocal size, y
        if not text:
            return
        scale, baseline = _scale(list(tm), list(cm))
        pieces = text.split("\n")
        for index, piece in enumerate(pieces):
            if piece.strip():
                size = max(size, float(font_size or 0) * (scale or 1.0))
                if y is None:
                    y = baseline
            parts.append(piece)
            if index < len(pieces) - 1:
                _close()

    def _close() -> None:
        nonlocal size, y
        line = " ".join("".join(parts).split())
        if line:
            lines.append(_Line(line, round(size * 2) / 2, y if y is not None else 0.0))
        parts.clear()
        size, y = 0.0, None

    page.extract_text(visitor_text=visit)
    _close()
    return lines


def _has_images(resources: Any, depth: int = 0) -> bool:
    """Whether a page's (or form's) resources draw an image, looking into forms (scanners wrap the
    page image in one) up to three levels deep."""
    try:
        xobjects = resources.get_object().get("/XObject") if resources is not None else None
        if xobjects is None:
            return False
        for item in xobjects.get_object().values():
            xobject = item.get_object()
            subtype = xobject.get("/Subtype")
            if subtype == "/Image":
                return True
            if subtype == "/Form" and depth < 3 and _has_images(xobject.get("/Resources"), depth + 1):
                return True
    except Exception:  # a damaged resource dictionary: assume no image
        return False
    return False


def _outline(reader: Any) -> dict[int, list[tuple[int, str]]]:
    """Outline entries as page index -> [(level, title)] in outline order (levels from 1)."""
    found: dict[int, list[tuple[int, str]]] = {}

    def walk(items: list[Any], level: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, level + 1)
                continue
            try:
                page = reader.get_destination_page_number(item)
                title = " ".join(str(item.title or "").split())
            except Exception:  # a broken destination: skip the entry
                continue
            if title and page is not None and page >= 0:
                found.setdefault(page, []).append((min(level, 6), title))

    try:
        walk(list(reader.outline), 1)
    except Exception:  # a damaged outline: no headings from it
        return {}
    return found


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text).lower()


def _size_levels(pages: list[_Page]) -> dict[float, int]:
    """Font size -> heading level, from the body size (the size most characters are set in)."""
    weights: Counter[float] = Counter()
    for page in pages:
        for line in page.lines:
            weights[line.size] += len(line.text)
    if not weights:
        return {}
    body = weights.most_common(1)[0][0]
    threshold = max(body * _HEADING_RATIO, body + _HEADING_MIN_GAIN)
    candidates = [line for page in pages for line in page.lines if _looks_like_heading(line, threshold)]
    total = sum(len(page.lines) for page in pages)
    if not candidates or len(candidates) > max(_FEW_HEADINGS, _MAX_HEADING_SHARE * total):
        return {}
    sizes = sorted({line.size for line in candidates}, reverse=True)
    return {size: min(index + 1, _MAX_LEVELS) for index, size in enumerate(sizes)}


def _looks_like_heading(line: _Line, threshold: float) -> bool:
    return (
        line.size >= threshold
        and len(line.text) <= _HEADING_MAX_CHARS
        and not _SENTENCE_END.search(line.text)
        and not line.text.isdigit()
    )


def _join(previous: str, line: str) -> str:
    """Two lines of one paragraph: CJK text joins directly, a hyphenated word is mended, else a space."""
    if previous.endswith("-") and len(previous) > 1 and previous[-2].isalpha() and line[:1].islower():
        return previous[:-1] + line
    if _CJK.match(previous[-1:]) and _CJK.match(line[:1]):
        return previous + line
    return previous + " " + line


def _without_page_numbers(lines: list[_Line]) -> list[_Line]:
    """The page's lines without a page number as its first or last line."""
    kept = list(lines)
    if kept and _PAGE_NUMBER.match(kept[-1].text):
        kept.pop()
    if kept and _PAGE_NUMBER.match(kept[0].text):
        kept.pop(0)
    return kept


def _page_markdown(lines: list[_Line], outline: list[tuple[int, str]], levels: dict[float, int]) -> str:
    """One page as Markdown: headings as '#' lines, paragraphs split at wider line gaps."""
    gaps = [a.y - b.y for a, b in itertools.pairwise(lines) if a.y - b.y > 0]
    usual = statistics.median(gaps) if gaps else 0.0
    pending = {_squash(title): (level, title) for level, title in outline}
    blocks: list[str] = []
    paragraph = ""
    previous: _Line | None = None

    def flush() -> None:
        nonlocal paragraph
        if paragraph:
            blocks.append(text_line(paragraph))
        paragraph = ""

    for line in lines:
        heading = pending.pop(_squash(line.text), None) if pending else None
        if heading is None and line.size in levels:
            heading = (levels[line.size], line.text)
        if heading is not None:
            flush()
            blocks.append(f"{'#' * heading[0]} {text_line(heading[1])}")
        elif paragraph and previous is not None and usual and previous.y - line.y > _PARAGRAPH_GAP * usual:
            flush()
            paragraph = line.text
        else:
            paragraph = _join(paragraph, line.text) if paragraph else line.text
        previous = line
    flush()
    missing = [f"{'#' * level} {text_line(title)}" for level, title in outline if _squash(title) in pending]
    return "\n\n".join(missing + blocks)


def _open(data: bytes) -> Any:
    from pypdf import PdfReader
    from pypdf.errors import DependencyError, FileNotDecryptedError

    # pypdf logs each repair it makes to a damaged file ("EOF marker not found"); a file it cannot
    # read is reported with its reason, one it repaired reads fine: neither needs its log lines.
    logging.getLogger("pypdf").setLevel(logging.ERROR)

    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            try:
                opened = reader.decrypt("")
            except (DependencyError, NotImplementedError) as exc:
                raise ReadFailed(f"encrypted PDF that cannot be opened here ({described(exc)})") from exc
            if not opened:
                raise ReadFailed("password-protected PDF (it needs a password to open)")
        len(reader.pages)
    except ReadFailed:
        raise
    except FileNotDecryptedError as exc:
        raise ReadFailed("password-protected PDF (it needs a password to open)") from exc
    except Exception as exc:  # pypdf raises many kinds on a damaged file (PdfReadError, KeyError, ...)
        raise ReadFailed(f"corrupt PDF ({described(exc)})") from exc
    return reader


def _pages(reader: Any) -> Iterator[_Page]:
    for number, page in enumerate(reader.pages, start=1):
        try:
            lines = _page_lines(page)
        except Exception as exc:  # one damaged page spoils the file: nothing half-read
            raise ReadFailed(f"corrupt PDF (page {number}: {described(exc)})") from exc
        yield _Page(lines, has_images=not lines and _has_images(page.get("/Resources")))


def _page_list(numbers: list[int]) -> str:
    """ "page 4" or "pages 4, 7 and 12 more"."""
    shown = ", ".join(str(n) for n in numbers[:10])
    more = f" and {len(numbers) - 10} more" if len(numbers) > 10 else ""
    return ("page " if len(numbers) == 1 else "pages ") + shown + more


def read_pdf(data: bytes) -> Parsed:
    """A PDF's pages as parts (location: page), titled by its metadata, else its first heading."""
    reader = _open(data)
    pages = list(_pages(reader))
    outline = _outline(reader)
    levels = {} if outline else _size_levels(pages)
    parts: list[DocumentPart] = []
    scanned: list[int] = []
    for index, page in enumerate(pages):
        if page.has_images:
            scanned.append(index + 1)
        lines = _without_page_numbers(page.lines)
        if lines or outline.get(index):
            markdown = _page_markdown(lines, outline.get(index, []), levels)
            parts.append(DocumentPart(markdown, Location(page=index + 1)))
    if not any(page.lines for page in pages):
        raise ReadFailed(SCANNED)  # scanned, or text drawn as shapes: either way nothing to read
    warnings = (f"{_page_list(scanned)}: {SCANNED}; skipped",) if scanned else ()
    return Parsed(tuple(parts), title=_title(reader, parts), warnings=warnings)


def _title(reader: Any, parts: list[DocumentPart]) -> str:
    try:
        metadata = reader.metadata
        title = own_title(metadata.title if metadata is not None else None)
    except Exception:  # unreadable metadata: fall back to the headings
        title = ""
    if title:
        return title
    for part in parts:
        for block in part.markdown.split("\n\n"):
            if block.startswith("#"):
                return block.lstrip("#").strip()
    return ""
