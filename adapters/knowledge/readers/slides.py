"""PowerPoint decks (.pptx) with python-pptx: one section per slide, speaker notes included.

A slide's title is its heading (a slide without one has none); the text of its other shapes follows in
the deck's order (grouped shapes included, bullets indented by level), its charts (title, axis titles,
categories and series with their values), then its tables row by row (rows.render_row), then its
speaker notes. Every part is located by its slide number.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

from adapters.knowledge.readers.base import Parsed, ReadFailed, described, own_title, text_line
from adapters.knowledge.readers.rows import distinct_cells, is_header, render_row
from core.models import DocumentPart, Location

NOTES_LABEL = "Speaker notes:"


def _shapes(shapes: Any) -> Iterator[Any]:
    """Shapes in order, the members of groups in place of the group."""
    for shape in shapes:
        if hasattr(shape, "shapes"):  # a group shape
            yield from _shapes(shape.shapes)
        else:
            yield shape


def _text_frame(frame: Any) -> str:
    lines = []
    for paragraph in frame.paragraphs:
        text = " ".join(paragraph.text.split())
        if text:
            indent = "  " * min(paragraph.level, 8)
            lines.append(indent + ("- " if paragraph.level else "") + text_line(text))
    return "\n".join(lines)


def _table(table: Any) -> list[str]:
    rows = [distinct_cells([" ".join(cell.text.split()) for cell in row.cells]) for row in table.rows]
    rows = [row for row in rows if any(row)]
    header = rows[0] if len(rows) > 1 and is_header(rows[0]) else None
    return [render_row(row, header) for row in (rows[1:] if header is not None else rows)]


def _chart(chart: Any) -> str:
    """A chart as text: its title, axis titles, then each series with its values by category."""
    lines: list[str] = []
    if chart.has_title and chart.chart_title.has_text_frame:
        title = " ".join(chart.chart_title.text_frame.text.split())
        if title:
            lines.append(text_line(title))
    for axis_name in ("category_axis", "value_axis"):
        try:
            axis = getattr(chart, axis_name)
        except (ValueError, KeyError, AttributeError):  # a pie chart has no axes
            continue
        if axis.has_title and axis.axis_title.has_text_frame:
            label = " ".join(axis.axis_title.text_frame.text.split())
            if label:
                lines.append(text_line(label))
    try:
        categories = [" ".join(str(c).split()) for c in chart.plots[0].categories] if chart.plots else []
    except (ValueError, KeyError, AttributeError, IndexError):
        categories = []
    for plot in chart.plots:
        for series in plot.series:
            name = " ".join(str(series.name or "").split())
            values = list(series.values)
            pairs = [
                f"{category}: {value:g}" if isinstance(value, int | float) else category
                for category, value in zip(categories, values, strict=False)
                if value is not None
            ]
            text = f"{name}: {', '.join(pairs)}" if name and pairs else name or ", ".join(pairs)
            if text:
                lines.append(text_line(text))
    return "\n".join(lines)


def _slide_part(slide: Any, number: int) -> tuple[DocumentPart, str]:
    """The slide as a part, and its title."""
    title_shape = slide.shapes.title
    title = " ".join(title_shape.text_frame.text.split()) if title_shape is not None else ""
    blocks: list[str] = []
    for shape in _shapes(slide.shapes):
        if title_shape is not None and shape.shape_id == title_shape.shape_id:
            continue
        if getattr(shape, "has_text_frame", False) and shape.has_text_frame:
            text = _text_frame(shape.text_frame)
            if text:
                blocks.append(text)
        if getattr(shape, "has_chart", False) and shape.has_chart:
            text = _chart(shape.chart)
            if text:
                blocks.append(text)
        if getattr(shape, "has_table", False) and shape.has_table:
            blocks.extend(_table(shape.table))
    if slide.has_notes_slide:
        frame = slide.notes_slide.notes_text_frame
        notes = " ".join(frame.text.split()) if frame is not None else ""
        if notes:
            blocks.append(f"{NOTES_LABEL} {notes}")
    if not blocks and title:  # a section divider: its title is its content
        blocks.append(text_line(title))
    heading = (title,) if title else ()  # a heading path is not parsed as Markdown: no escaping
    return DocumentPart("\n\n".join(blocks), Location(slide=number), heading), title


def read_pptx(data: bytes) -> Parsed:
    """A deck's slides as parts (location: slide), titled by its properties, else its first slide title."""
    from pptx import Presentation

    try:
        deck = Presentation(io.BytesIO(data))
        slides = [_slide_part(slide, number) for number, slide in enumerate(deck.slides, start=1)]
        title = own_title(deck.core_properties.title)
    except Exception as exc:  # python-pptx raises KeyError, ValueError, lxml errors ... on a damaged file
        raise ReadFailed(f"corrupt PowerPoint deck ({described(exc)})") from exc
    title = title or next((slide_title for _, slide_title in slides if slide_title), "")
    return Parsed(tuple(part for part, _ in slides), title=title)
