"""Reading PDF, Word, PowerPoint, Excel and CSV files: text, headings, titles, locations, skip reasons."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.knowledge.document_readers import UnreadableDocument, iter_document_paths, read_document
from core.knowledge.chunking import chunk_parts
from core.models import Chunk, Location
from tests.kb.document_files import (
    docx_bytes,
    encrypted_office,
    handbook_pages,
    pdf_bytes,
    pptx_bytes,
    write,
    xlsx_bytes,
    zip_bytes,
)


def chunks_of(path: Path) -> list[Chunk]:
    return chunk_parts(read_document(path).parts)


def reason_for(path: Path) -> str:
    with pytest.raises(UnreadableDocument) as caught:
        read_document(path)
    return caught.value.reason


# ---------- PDF ----------


def test_pdf_pages_keep_their_numbers_and_font_size_headings(tmp_path: Path) -> None:
    """Each page's text is located on its page; larger lines are headings that carry to the next page."""
    path = write(tmp_path / "员工手册.pdf", pdf_bytes(handbook_pages(), title="员工手册 2024"))
    doc = read_document(path)
    assert (doc.name, doc.title) == ("员工手册.pdf", "员工手册 2024")
    found = [(c.location.page, c.heading_path, c.text) for c in chunk_parts(doc.parts)]
    assert found[1:] == [
        (2, ("员工手册", "第三章 考勤"), "员工每天九点上班，弹性时间为半小时。迟到三次记旷工一天。"),
        (
            3,
            ("员工手册", "第三章 考勤"),
            "加班需提前在系统中申请，经主管批准后计入调休。调休假须在三个月内使用完毕。",
        ),
        (4, ("员工手册", "第四章 休假"), "年假为每年十五个工作日。"),
    ]


def test_pdf_outline_gives_the_headings_and_a_title_when_metadata_has_none(tmp_path: Path) -> None:
    """Bookmarks become headings on their pages (at the page top when their text is not found there);
    without a metadata title the first heading is the title."""
    outline = [(1, 0, "第三章 考勤"), (2, 1, "加班"), (3, 0, "第四章 休假")]
    path = write(tmp_path / "handbook.pdf", pdf_bytes(handbook_pages(), outline=outline))
    doc = read_document(path)
    assert doc.title == "第三章 考勤"
    by_page = {c.location.page: c.heading_path for c in chunk_parts(doc.parts)}
    assert by_page == {1: (), 2: ("第三章 考勤",), 3: ("第三章 考勤", "加班"), 4: ("第四章 休假",)}
    assert "# 员工手册" not in doc.markdown  # with an outline, font sizes make no headings


def test_pdf_page_numbers_at_a_page_edge_are_dropped(tmp_path: Path) -> None:
    """A bare page number as a page's first or last line is not document text."""
    pages = [[("正文第一页的内容。", 11), ("1", 9)], [("- 2 -", 9), ("正文第二页的内容。", 11)]]
    doc = read_document(write(tmp_path / "numbered.pdf", pdf_bytes(pages)))
    assert [c.text for c in chunk_parts(doc.parts)] == ["正文第一页的内容。", "正文第二页的内容。"]


def test_scanned_pages_are_skipped_with_a_warning_and_a_scanned_pdf_is_refused(tmp_path: Path) -> None:
    """A page with only an image is left out and named; a PDF of nothing but scans is skipped."""
    mixed = write(tmp_path / "mixed.pdf", pdf_bytes([[("文字页。", 11)], [], [("另一页。", 11)]], images=[1]))
    doc = read_document(mixed)
    assert [c.location.page for c in chunk_parts(doc.parts)] == [1, 3]
    assert doc.warnings == ("page 2: no text layer (scanned?) — OCR not supported; skipped",)
    scanned = write(tmp_path / "scan.pdf", pdf_bytes([[], []], images=[0], framed_images=[1]))
    assert reason_for(scanned) == "no text layer (scanned?) — OCR not supported"
    framed = write(tmp_path / "framed.pdf", pdf_bytes([[("有字。", 11)], []], framed_images=[1]))
    assert read_document(framed).warnings == (
        "page 2: no text layer (scanned?) — OCR not supported; skipped",
    )


def test_password_protected_and_corrupt_pdfs_are_refused_but_an_owner_password_alone_is_not(
    tmp_path: Path,
) -> None:
    """A PDF needing a password to open, or a damaged one, is refused with its reason; a PDF encrypted
    only against editing (empty user password) reads."""
    locked = write(tmp_path / "locked.pdf", pdf_bytes(handbook_pages(), user_password="secret"))
    assert reason_for(locked) == "password-protected PDF (it needs a password to open)"
    restricted = write(tmp_path / "restricted.pdf", pdf_bytes(handbook_pages(), user_password=""))
    assert "调休假须在三个月内使用完毕" in read_document(restricted).markdown
    damaged = pdf_bytes(handbook_pages())
    broken = write(tmp_path / "broken.pdf", damaged[: len(damaged) // 3])
    assert reason_for(broken).startswith("corrupt PDF")


# ---------- Word ----------


def test_docx_headings_lists_and_tables_as_rows(tmp_path: Path) -> None:
    """Word headings open sections, list items are '- ' lines, a table row reads with its header."""
    doc = read_document(write(tmp_path / "hb.docx", docx_bytes()))
    assert (doc.name, doc.title) == ("hb.docx", "员工手册")  # the Title paragraph
    found = [(c.heading_path, c.text) for c in chunk_parts(doc.parts)]
    assert found == [
        (("第一章 总则",), "本手册适用于全体员工。"),
        (("第一章 总则", "考勤"), "迟到三次记旷工一天。\n\n- 上班打卡\n\n- 下班打卡"),
        (("第二章 报销",), "项目: 差旅; 上限: 5000; 审批人: 部门经理\n\n项目: 餐费; 上限: 200; 审批人: 主管"),
    ]
    assert not any(c.location for c in chunks_of(tmp_path / "hb.docx"))  # python-docx laid out no pages


def test_docx_title_comes_from_its_properties_first(tmp_path: Path) -> None:
    """The core properties' title wins over the Title paragraph; a placeholder title does not."""
    assert read_document(write(tmp_path / "a.docx", docx_bytes(title="HR handbook"))).title == "HR handbook"
    assert read_document(write(tmp_path / "b.docx", docx_bytes(title="Document1"))).title == "员工手册"


def test_password_protected_and_corrupt_office_files_are_refused(tmp_path: Path) -> None:
    """An encrypted .docx/.xlsx (an OLE container) and a damaged one are skipped with their reasons."""
    locked = write(tmp_path / "locked.docx", encrypted_office(docx_bytes()))
    assert reason_for(locked).startswith("password-protected Office document")
    sheet = write(tmp_path / "locked.xlsx", encrypted_office(xlsx_bytes({"S": [["a", "b"]]})))
    assert reason_for(sheet).startswith("password-protected Office document")
    assert reason_for(write(tmp_path / "broken.docx", b"PK\x03\x04 not really")).startswith("corrupt file")
    legacy = write(tmp_path / "old.doc", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 512)
    assert reason_for(legacy).startswith("old binary Office format")
    hollow = {"[Content_Types].xml": b"<Types/>", "xl/workbook.xml": b"<not-a-workbook", "ppt/x": b""}
    assert reason_for(write(tmp_path / "hollow.xlsx", zip_bytes(hollow))).startswith("corrupt Excel workbook")
    deck = {"[Content_Types].xml": b"<Types/>", "ppt/presentation.xml": b"<broken"}
    assert reason_for(write(tmp_path / "hollow.pptx", zip_bytes(deck))).startswith("corrupt PowerPoint deck")


# ---------- PowerPoint ----------


def test_pptx_one_section_per_slide_with_notes_and_tables(tmp_path: Path) -> None:
    """Each slide is its own section under its title, located by slide; notes and table rows included."""
    doc = read_document(write(tmp_path / "deck.pptx", pptx_bytes()))
    assert (doc.name, doc.title) == ("deck.pptx", "Q3 results")
    found = [(c.location, c.heading_path, c.text) for c in chunk_parts(doc.parts)]
    assert found == [
        (
            Location(slide=1),
            ("Q3 results",),
            "Revenue grew 12 percent\n  - Churn fell to 2 percent\n\nSpeaker notes: Mention the new Berlin office.",
        ),
        (Location(slide=2), (), "An untitled slide about hiring plans"),
        (Location(slide=3), ("Budget",), "Team: Sales; Budget: 300k\n\nTeam: Support; Budget: 120k"),
    ]


# ---------- spreadsheets ----------


def test_xlsx_sheets_are_sections_and_rows_read_with_their_header(tmp_path: Path) -> None:
    """Every sheet is a section; its rows are labelled by the header and cite their sheet and rows."""
    sheets: dict[str, list[list[object]]] = {
        "Budget": [
            ["2024 budget"],
            ["Team", "Amount", "Owner"],
            ["Sales", 300.0, "Ann"],
            ["Ops", None, "Bo"],
        ],
        "People": [["Name", "Start"], ["Cy", "2024-03-01"]],
    }
    doc = read_document(write(tmp_path / "book.xlsx", xlsx_bytes(sheets, title="Plan 2024")))
    assert (doc.name, doc.title) == ("book.xlsx", "Plan 2024")
    found = [(c.heading_path, c.location.label(), c.text) for c in chunk_parts(doc.parts)]
    assert found == [
        (
            ("Budget",),
            "sheet Budget, rows 1–4",
            "2024 budget\n\nTeam: Sales; Amount: 300; Owner: Ann\n\nTeam: Ops; Owner: Bo",
        ),
        (("People",), "sheet People, row 2", "Name: Cy; Start: 2024-03-01"),
    ]


def test_a_large_sheet_is_chunked_by_rows(tmp_path: Path) -> None:
    """3000 rows become many chunks within the limit, each citing a contiguous row range, none lost."""
    rows: list[list[object]] = [["Order", "Customer", "Total"]]
    rows += [[f"A{r:05d}", f"customer {r}", r * 1.5] for r in range(2, 3002)]
    chunks = chunk_parts(read_document(write(tmp_path / "orders.xlsx", xlsx_bytes({"Orders": rows}))).parts)
    assert len(chunks) > 20 and all(c.tokens <= 400 for c in chunks)
    assert chunks[0].location.first_row == 2 and chunks[-1].location.last_row == 3001
    assert sum(c.text.count("Order: A") for c in chunks) == 3000
    assert "Order: A00500; Customer: customer 500; Total: 750" in "\n".join(c.text for c in chunks)


def test_csv_and_tsv_rows_with_their_header(tmp_path: Path) -> None:
    """A CSV (any common delimiter) or TSV reads as header-labelled rows located by row number."""
    semicolons = write(tmp_path / "people.csv", "name;team\nAnn;Sales\nBo;Ops\n")
    assert [(c.location.label(), c.text) for c in chunks_of(semicolons)] == [
        ("rows 2–3", "name: Ann; team: Sales\n\nname: Bo; team: Ops")
    ]
    tabs = write(tmp_path / "t.tsv", "k\tv\nalpha\t1\n")
    assert [c.text for c in chunks_of(tabs)] == ["k: alpha; v: 1"]
    assert read_document(tabs).name == "t.tsv"


def test_cell_text_that_looks_like_markup_stays_text(tmp_path: Path) -> None:
    """A value starting with '# ' or '```' is a row's text, not a heading or a code fence."""
    path = write(tmp_path / "odd.csv", "# not a heading\n```\nlast\n")
    assert [c.text for c in chunks_of(path)] == ["# not a heading\n\n```\n\nlast"]


# ---------- chosen by content ----------


def test_the_reader_is_chosen_by_content_not_by_name(tmp_path: Path) -> None:
    """A PDF named .md reads as a PDF, a deck named .docx as a deck; text named .pdf is refused."""
    assert read_document(write(tmp_path / "x.md", pdf_bytes(handbook_pages()))).parts[0].location.page == 1
    assert read_document(write(tmp_path / "y.docx", pptx_bytes())).parts[0].location.slide == 1
    assert (
        reason_for(write(tmp_path / "z.pdf", "just text"))
        == "not a PDF (its content does not start like one)"
    )
    about = write(
        tmp_path / "about-pdf.md", "# PDF files\n\nEvery PDF starts with %PDF-1.7 on its first line.\n"
    )
    assert read_document(about).title == "PDF files"


def test_a_walk_finds_suffixless_documents_by_their_signature(tmp_path: Path) -> None:
    """A downloaded PDF without a suffix is read as a PDF; a suffixless text file is walked too, and refused
    with its reason (ingest lists every file it does not take)."""
    write(tmp_path / "docs" / "report", pdf_bytes(handbook_pages()))
    write(tmp_path / "docs" / "LICENSE", "MIT")
    found = [p.name for p in iter_document_paths([tmp_path / "docs"])]
    assert found == ["LICENSE", "report"]
    assert read_document(tmp_path / "docs" / "report").name == "report"
    with pytest.raises(UnreadableDocument):
        read_document(tmp_path / "docs" / "LICENSE")


def test_docx_pages_come_from_words_rendered_page_breaks(tmp_path: Path) -> None:
    """When Word recorded where its pages broke, each paragraph is located on its page."""
    import io

    import docx
    from docx.oxml import OxmlElement

    document = docx.Document()
    document.add_heading("报销制度", level=1)
    document.add_paragraph("第一页的内容。")
    second = document.add_paragraph()
    second.add_run("第二页开头的内容。")._r.insert(0, OxmlElement("w:lastRenderedPageBreak"))
    document.add_paragraph("第二页的更多内容。")
    third = document.add_paragraph()
    third.add_run("第三页的内容。")._r.insert(0, OxmlElement("w:lastRenderedPageBreak"))
    buffer = io.BytesIO()
    document.save(buffer)
    chunks = chunks_of(write(tmp_path / "paged.docx", buffer.getvalue()))
    assert [(c.location.page, c.heading_path, c.text) for c in chunks] == [
        (1, ("报销制度",), "第一页的内容。"),
        (2, ("报销制度",), "第二页开头的内容。\n\n第二页的更多内容。"),
        (3, ("报销制度",), "第三页的内容。"),
    ]
