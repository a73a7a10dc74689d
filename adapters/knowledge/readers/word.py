"""Word documents (.docx) with python-docx: headings, lists and tables in reading order.

Headings are paragraphs styled "Heading N" / "Title" (or 标题 N), or given an outline level; list
paragraphs (numbered or bulleted) become "- " items, indented by level; each table row becomes a line
labelled by the header row (rows.render_row). A .docx has no pages of its own, but Word records where
its pages broke when it last laid the document out (``w:lastRenderedPageBreak``); when such marks are
there, each paragraph is located on its page, else the document is one part without pages.
"""

from __future__ import annotations

import io
import itertools
import re
from dataclasses import dataclass
from typing import Any

from adapters.knowledge.readers.base import Parsed, ReadFailed, described, own_title, text_line
from adapters.knowledge.readers.rows import distinct_cells, is_header, render_row
from core.models import DocumentPart, Location

_HEADING_STYLE = re.compile(r"^(?:heading|标题)\s*([1-9])$", re.IGNORECASE)
_TITLE_STYLES = frozenset({"title", "标题"})
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


@dataclass(frozen=True, slots=True)
class _Block:
    markdown: str
    page: int
    heading: bool = False


def _outline_level(element: Any) -> int | None:
    """A paragraph's (or style's) outline level, 1-based, when it sets one below body text."""
    if element is None:
        return None
    found = element.find(f"{_W}pPr/{_W}outlineLvl")
    if found is None:
        return None
    try:
        level = int(found.get(f"{_W}val", "9")) + 1
    except ValueError:
        return None
    return level if 1 <= level <= 6 else None


class _Styles:
    """Paragraph styles by id, looked up once per document (python-docx's paragraph.style scans
    every style on each call: 70 % of the reading time of a typical file, measured)."""

    def __init__(self, document: Any) -> None:
        from docx.enum.style import WD_STYLE_TYPE

        self._by_id: dict[str, tuple[str, Any]] = {}
        self._default: tuple[str, Any] = ("", None)
        for style in document.styles:
            if style.type != WD_STYLE_TYPE.PARAGRAPH:
                continue
            entry = ((style.name or "").strip(), style.element)
            self._by_id[style.style_id] = entry
            if style.element.get(f"{_W}default") in ("1", "true"):
                self._default = entry

    def of(self, paragraph: Any) -> tuple[str, Any]:
        """(style name, style element) of a paragraph."""
        style_id = paragraph._p.style
        return self._by_id.get(style_id, self._default) if style_id else self._default


def _list_level(paragraph: Any, name: str, style: Any) -> int | None:
    """0-based nesting level when the paragraph is a list item, else None."""
    numbering = paragraph._p.find(f"{_W}pPr/{_W}numPr")
    if numbering is None and style is not None:
        numbering = style.find(f"{_W}pPr/{_W}numPr")
    if numbering is None:
        return 0 if name.lower().startswith("list") and "paragraph" not in name.lower() else None
    level = numbering.find(f"{_W}ilvl")
    try:
        return int(level.get(f"{_W}val", "0")) if level is not None else 0
    except ValueError:
        return 0


def _heading_level(paragraph: Any, name: str, style: Any) -> tuple[int | None, bool]:
    """(heading level or None, whether it is the Title style)."""
    if name.lower() in _TITLE_STYLES:
        return 1, True
    match = _HEADING_STYLE.match(name)
    if match:
        return int(match.group(1)), False
    level = _outline_level(paragraph._p)
    if level is None:
        level = _outline_level(style)
    return level, False


def _starts_new_page(paragraph: Any) -> tuple[int, int]:
    """(page breaks before the paragraph's text, page breaks inside it) from Word's rendered marks."""
    breaks = paragraph.rendered_page_breaks
    if not breaks:
        return 0, 0
    first = breaks[0].preceding_paragraph_fragment
    leading = 1 if first is None or not first.text.strip() else 0
    return leading, len(breaks) - leading


def _paragraph_block(paragraph: Any, page: int, titles: list[str], styles: _Styles) -> _Block | None:
    text = " ".join(paragraph.text.split())
    if not text:
        return None
    name, style = styles.of(paragraph)
    level, is_title = _heading_level(paragraph, name, style)
    if level is not None:
        if is_title:
            titles.append(text)
        return _Block(f"{'#' * level} {text_line(text)}", page, heading=True)
    depth = _list_level(paragraph, name, style)
    if depth is not None:
        return _Block("  " * min(depth, 8) + "- " + text_line(text), page)
    return _Block(text_line(text), page)


def _table_blocks(table: Any, page: int) -> list[_Block]:
    rows = [distinct_cells([" ".join(cell.text.split()) for cell in row.cells]) for row in table.rows]
    rows = [row for row in rows if any(row)]
    if not rows:
        return []
    header = rows[0] if len(rows) > 1 and is_header(rows[0]) else None
    body = rows[1:] if header is not None else rows
    return [_Block(render_row(row, header), page) for row in body]


def _blocks(document: Any) -> tuple[list[_Block], list[str], bool]:
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    blocks: list[_Block] = []
    titles: list[str] = []
    styles = _Styles(document)
    page = 1
    paged = False
    for item in document.iter_inner_content():
        if isinstance(item, Paragraph):
            before, inside = _starts_new_page(item)
            paged = paged or bool(before or inside)
            page += before
            block = _paragraph_block(item, page, titles, styles)
            if block is not None:
                blocks.append(block)
            page += inside
        elif isinstance(item, Table):
            blocks.extend(_table_blocks(item, page))
            breaks = sum(1 for _ in item._element.iter(f"{_W}lastRenderedPageBreak"))
            page += breaks  # rows that ran onto the next pages: the table is cited where it starts
            paged = paged or bool(breaks)
    return blocks, titles, paged


def read_docx(data: bytes) -> Parsed:
    """A Word document as parts (one per page when Word recorded its pages), titled by its properties,
    else its Title paragraph, else its first heading."""
    import docx

    try:
        document = docx.Document(io.BytesIO(data))
        blocks, titles, paged = _blocks(document)
        title = own_title(document.core_properties.title)
    except Exception as exc:  # python-docx raises KeyError, ValueError, lxml errors ... on a damaged file
        raise ReadFailed(f"corrupt Word document ({described(exc)})") from exc
    title = title or (titles[0] if titles else "")
    if not title:
        title = next((b.markdown.lstrip("#").strip() for b in blocks if b.heading), "")
    if not paged:
        return Parsed((DocumentPart("\n\n".join(b.markdown for b in blocks)),), title=title)
    parts = [
        DocumentPart("\n\n".join(block.markdown for block in group), Location(page=page))
        for page, group in itertools.groupby(blocks, key=lambda block: block.page)
    ]
    return Parsed(tuple(parts), title=title)
