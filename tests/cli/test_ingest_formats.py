"""`kb ingest` as a subprocess on files a newcomer brings: a 0-byte PDF, a Word file without text, a
chart on a slide, formulas a program saved without values."""

from __future__ import annotations

import json
from pathlib import Path

import docx
import openpyxl
import pptx
from pptx.chart.data import CategoryChartData
from pptx.enum.chart import XL_CHART_TYPE
from pptx.util import Inches

from tests.cli.cli_support import clean_env, kb


def make_files(folder: Path) -> None:
    folder.mkdir()
    (folder / "empty.pdf").write_bytes(b"")
    docx.Document().save(str(folder / "textless.docx"))
    deck = pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Sales"
    data = CategoryChartData()
    data.categories = ["Q1", "Q2"]
    data.add_series("Revenue", (10, 20))
    shape = slide.shapes.add_chart(
        XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(1), Inches(6), Inches(4), data
    )
    shape.chart.has_title = True
    shape.chart.chart_title.text_frame.text = "Quarterly revenue by region"
    deck.save(str(folder / "deck.pptx"))
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["Item", "Price", "Doubled"])
    sheet.append(["Lamp", 5, "=B2*2"])
    book.save(str(folder / "prices.xlsx"))


def test_empty_textless_chart_and_formula_files_are_read_as_a_user_expects(tmp_path: Path) -> None:
    """0 bytes is "empty file", a Word file without text says so, a chart's title and values are
    searchable, and a formula without a saved value is read as its formula with a warning."""
    folder = tmp_path / "docs"
    make_files(folder)
    env = clean_env(tmp_path / "home")
    result = kb(env, "ingest", str(folder), "--dataset", "t")
    assert result.returncode == 0, result.stderr
    assert f"warning: skipped {folder / 'empty.pdf'}: empty file" in result.stderr
    assert f"warning: skipped {folder / 'textless.docx'}: no text in this Word document" in result.stderr
    assert f"warning: {folder / 'prices.xlsx'}: 1 formula cell(s) have no saved value" in result.stderr
    assert "documents: 2 new" in result.stdout

    def top(query: str) -> str:
        found = kb(env, "search", query, "--dataset", "t", "--json")
        assert found.returncode == 0, found.stderr
        return str(json.loads(found.stdout)["hits"][0]["content"])

    assert top("Quarterly revenue by region") == "Quarterly revenue by region\nRevenue: Q1: 10, Q2: 20"
    assert "=B2*2" in top("Lamp price doubled")
