"""Spreadsheets: Excel workbooks (openpyxl, read-only streaming) and CSV/TSV (the standard csv module).

Each sheet is a section (its name the heading) and each row a part located by sheet and row number,
rendered with its header (rows.render_row), so chunking packs consecutive rows into chunks that cite
their row range. The header is the sheet's first row with two or more cells, all filled; a title line
above it is kept as a paragraph; a sheet that is only a header row keeps that row. Formulas are read as
their last computed values; a formula the file holds no value for (saved by a program that does not
calculate) is read as its formula text, with a warning.
"""

from __future__ import annotations

import csv
import io
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from adapters.knowledge.readers.base import Parsed, ReadFailed, described, own_title, text_line
from adapters.knowledge.readers.rows import cell_text, is_header, render_row
from core.models import DocumentPart, Location

_SNIFF_CHARS = 16 * 1024


def _rows_as_parts(
    rows: Iterable[tuple[int, Sequence[str]]], *, sheet: str, heading_path: tuple[str, ...]
) -> Iterator[DocumentPart]:
    """Parts of one sheet: each non-empty row rendered with the header found above it.

    Before the table starts, a row with a single filled cell is a caption (kept as a paragraph); the
    first row with more is the header when it is full (rows.is_header), else the table has none.
    """
    header: list[str] | None = None
    header_number = 0
    started = False
    rendered = False
    for number, cells in rows:
        trimmed = list(cells)
        while trimmed and not trimmed[-1]:
            trimmed.pop()
        if not trimmed:
            continue
        if not started:
            filled = [cell for cell in trimmed if cell]
            if len(filled) == 1:
                yield DocumentPart(
                    text_line(filled[0]), Location(sheet=sheet, first_row=number), heading_path
                )
                continue
            started = True
            if is_header(trimmed):
                header, header_number = trimmed, number
                continue
        rendered = True
        yield DocumentPart(render_row(trimmed, header), Location(sheet=sheet, first_row=number), heading_path)
    if header is not None and not rendered:  # only a header row: its cells are the sheet's content
        yield DocumentPart(
            render_row(header, None), Location(sheet=sheet, first_row=header_number), heading_path
        )


def read_xlsx(data: bytes) -> Parsed:
    """A workbook's sheets as row parts (location: sheet and row), titled by its properties.

    openpyxl warns (UserWarning) about workbook features it does not keep, such as data validation
    or conditional formatting; reading only the values loses nothing by them, so they are silenced.
    """
    import openpyxl

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        try:
            workbook = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
            formulas = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=False)
        except Exception as exc:  # openpyxl raises KeyError, ValueError, ... on a damaged workbook
            raise ReadFailed(f"corrupt Excel workbook ({described(exc)})") from exc
        uncomputed = 0
        try:
            parts: list[DocumentPart] = []
            for sheet, with_formulas in zip(workbook.worksheets, formulas.worksheets, strict=True):
                sheet_parts, unsaved = _sheet_parts(sheet, with_formulas)
                parts.extend(sheet_parts)
                uncomputed += unsaved
            title = own_title(workbook.properties.title)
        except Exception as exc:
            raise ReadFailed(f"corrupt Excel workbook ({described(exc)})") from exc
        finally:
            workbook.close()
            formulas.close()
    notes: tuple[str, ...] = ()
    if uncomputed:
        notes = (f"{uncomputed} formula cell(s) have no saved value; read as their formulas",)
    return Parsed(tuple(parts), title=title, warnings=notes)


def _with_formulas(values: Sequence[Any], sources: Sequence[Any]) -> tuple[list[Any], int]:
    """A row's values, a formula without a saved value replaced by its formula text; how many were."""
    row = list(values)
    replaced = 0
    for at, value in enumerate(row):
        source = sources[at] if at < len(sources) else None
        if value is None and isinstance(source, str) and source.startswith("="):
            row[at] = source
            replaced += 1
    return row, replaced


def _sheet_parts(sheet: Any, with_formulas: Any) -> tuple[list[DocumentPart], int]:
    """The sheet's rows as parts, and how many formula cells had no saved value."""
    for each in (sheet, with_formulas):
        each.reset_dimensions()  # some writers store a wrong used range; read every row there is
    name = " ".join(str(sheet.title).split())
    computed = sheet.iter_rows(min_row=1, values_only=True)
    written = with_formulas.iter_rows(min_row=1, values_only=True)
    rows: list[tuple[int, list[str]]] = []
    uncomputed = 0
    for number, (values, sources) in enumerate(zip(computed, written, strict=False), start=1):
        row, replaced = _with_formulas(values, sources)
        uncomputed += replaced
        rows.append((number, [cell_text(value) for value in row]))
    return list(_rows_as_parts(rows, sheet=name, heading_path=(name,))), uncomputed


def read_csv(text: str, *, tab_separated: bool = False) -> Parsed:
    """A CSV (or TSV) file's rows as parts (location: row), the first full row as the header."""
    sample = text[:_SNIFF_CHARS]
    dialect: Any = csv.excel_tab if tab_separated else csv.excel
    if not tab_separated:
        try:
            dialect = csv.Sniffer().sniff(sample, delimiters=",;\t|")
        except csv.Error:
            dialect = csv.excel
    try:
        rows = [
            (number, [cell_text(cell) for cell in row])
            for number, row in enumerate(csv.reader(io.StringIO(text), dialect), start=1)
        ]
    except csv.Error as exc:
        raise ReadFailed(f"malformed CSV ({described(exc)})") from exc
    return Parsed(tuple(_rows_as_parts(rows, sheet="", heading_path=())))
