"""Table rows as text that keeps its header: "Name: Alice; Department: Sales" (sheets, Word tables).

A row of a large table read alone (one chunk of rows 500-540) still says what each value is, which
matters more for retrieval than the table's look. A table whose first row is not a header (a cell of it
is empty) is rendered as "a | b | c".
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from adapters.knowledge.readers.base import text_line


def cell_text(value: object) -> str:
    """A cell's value as text: whole floats without ".0", dates without a midnight time, no newlines."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat(sep=" ")
    if isinstance(value, dt.date | dt.time):
        return value.isoformat()
    return " ".join(str(value).split())


def distinct_cells(cells: Sequence[str]) -> list[str]:
    """Cells of a row with horizontally merged cells (the same cell repeated) given once."""
    kept: list[str] = []
    for cell in cells:
        if not kept or cell != kept[-1] or not cell:
            kept.append(cell)
    return kept


def is_header(cells: Sequence[str]) -> bool:
    """Whether a first row can label the rows under it: two or more cells, none empty."""
    return len(cells) >= 2 and all(cells)


def render_row(cells: Sequence[str], header: Sequence[str] | None) -> str:
    """One row as one line: labelled by the header when there is one, empty cells left out."""
    if header is None:
        return text_line(" | ".join(cell for cell in cells if cell))
    pairs = []
    for index, cell in enumerate(cells):
        if not cell:
            continue
        label = header[index] if index < len(header) else ""
        pairs.append(f"{label}: {cell}" if label and label != cell else cell)
    return text_line("; ".join(pairs))
