"""Chunking documents read as parts (pages, slides, rows): headings carried, locations kept per chunk."""

from __future__ import annotations

import itertools

from core.answering.answer import citations, render_sources
from core.knowledge.chunking import chunk_markdown, chunk_parts, embedding_text
from core.models import DocumentPart, Hit, Location


def test_pdf_pages_carry_headings_and_never_share_a_chunk() -> None:
    """A chapter opened on page 1 still heads page 2's chunk; each chunk holds one page only."""
    parts = [
        DocumentPart("# 员工手册\n\n## 第三章 考勤\n\n每天九点上班。", Location(page=1)),
        DocumentPart("迟到三次记旷工一天。", Location(page=2)),
        DocumentPart("## 第四章 休假\n\n年假十五天。", Location(page=3)),
    ]
    chunks = chunk_parts(parts)
    assert [(c.text, c.heading_path, c.location.page) for c in chunks] == [
        ("每天九点上班。", ("员工手册", "第三章 考勤"), 1),
        ("迟到三次记旷工一天。", ("员工手册", "第三章 考勤"), 2),
        ("年假十五天。", ("员工手册", "第四章 休假"), 3),
    ]
    assert [c.position for c in chunks] == [0, 1, 2]


def test_parts_with_their_own_heading_path_reset_the_headings() -> None:
    """A slide's title replaces the previous slide's headings, even headings inside that slide."""
    parts = [
        DocumentPart("## Details\n\nfirst body", Location(slide=1), ("Intro",)),
        DocumentPart("second body", Location(slide=2), ("Results",)),
        DocumentPart("third body", Location(slide=3), ("Results",)),
    ]
    chunks = chunk_parts(parts)
    assert [(c.heading_path, c.location.slide) for c in chunks] == [
        (("Intro", "Details"), 1),
        (("Results",), 2),
        (("Results",), 3),
    ]


def test_rows_of_a_sheet_pack_together_and_span_their_rows() -> None:
    """Consecutive rows pack into one chunk whose location spans them; a new sheet starts a new chunk."""
    rows = [
        DocumentPart(f"Name: n{r}; Amount: {r}", Location(sheet="Q1", first_row=r), ("Q1",))
        for r in (2, 3, 4)
    ]
    rows.append(DocumentPart("Name: z; Amount: 9", Location(sheet="Q2", first_row=2), ("Q2",)))
    chunks = chunk_parts(rows)
    assert [(c.heading_path, c.location) for c in chunks] == [
        (("Q1",), Location(sheet="Q1", first_row=2, last_row=4)),
        (("Q2",), Location(sheet="Q2", first_row=2)),
    ]
    assert chunks[0].text == "Name: n2; Amount: 2\n\nName: n3; Amount: 3\n\nName: n4; Amount: 4"


def test_a_large_sheet_is_chunked_by_rows_within_the_limit() -> None:
    """Hundreds of rows become several chunks, each within the limit, whose row ranges tile the sheet."""
    rows = [
        DocumentPart(f"Item: widget number {r}; Price: {r * 3}", Location(sheet="S", first_row=r), ("S",))
        for r in range(2, 402)
    ]
    chunks = chunk_parts(rows, max_tokens=120)
    assert len(chunks) > 10
    assert all(c.tokens <= 120 for c in chunks)
    assert chunks[0].location.first_row == 2 and chunks[-1].location.last_row == 401
    for before, after in itertools.pairwise(chunks):
        assert after.location.first_row == before.location.last_row + 1


def test_markdown_is_one_part_without_a_location() -> None:
    """chunk_markdown is chunk_parts of one part: same chunks, no location."""
    text = "# T\n\n## A\n\nalpha\n\n## B\n\nbeta"
    assert chunk_markdown(text) == chunk_parts([DocumentPart(text)])
    assert not any(c.location for c in chunk_markdown(text))


def test_embedding_text_still_starts_with_title_and_headings_on_a_late_page() -> None:
    """A chunk from page 40 is embedded under the document title and its chapter."""
    parts = [
        DocumentPart("## 第九章 报销\n\n正文", Location(page=39)),
        DocumentPart("发票需原件。", Location(page=40)),
    ]
    late = chunk_parts(parts)[-1]
    assert embedding_text(late, document_title="财务制度") == "财务制度 > 第九章 报销\n发票需原件。"


def test_location_labels_and_round_trip() -> None:
    """Labels read as a person cites them; to_dict/from_dict round-trips and ignores junk."""
    assert Location(page=12).label() == "p. 12"
    assert Location(slide=3).label() == "slide 3"
    assert Location(sheet="Budget", first_row=2, last_row=40).label() == "sheet Budget, rows 2–40"
    assert Location(first_row=7).label() == "row 7"
    assert Location().label() == "" and not Location()
    place = Location(sheet="B", first_row=2, last_row=9)
    assert Location.from_dict(place.to_dict()) == place
    assert Location.from_dict({"page": "3", "slide": True, "sheet": 5}) == Location()


def test_citations_and_sources_carry_the_page() -> None:
    """A cited PDF paragraph renders as '[n] name p. 12 — heading' under the answer."""
    hit = Hit(
        "c1",
        "迟到三次记旷工一天。",
        0.9,
        "hr",
        "d1",
        "员工手册.pdf",
        "第三章 考勤",
        "/x.pdf",
        4,
        Location(page=12),
    )
    other = Hit("c2", "text", 0.5, "hr", "d2", "guide", "Intro", "/g.md")
    items = citations("见 [2] 和 [1]。", [other, hit])
    assert items[1].location.page == 12 and not items[0].location
    assert items[1].to_json()["page"] == 12 and "page" not in items[0].to_json()
    assert render_sources(items, "zh").splitlines() == [
        "来源:",
        "[1] guide — Intro",
        "[2] 员工手册.pdf p. 12 — 第三章 考勤",
    ]
