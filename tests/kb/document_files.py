"""Small documents of every supported format, written by the test itself with writer libraries.

PDF with reportlab (its built-in STSong-Light CID font draws Chinese without a font file), Word with
python-docx, PowerPoint with python-pptx, Excel with openpyxl, CSV and zip with the standard library.
Nothing binary is kept in the repository.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence
from pathlib import Path

CJK_FONT = "STSong-Light"


def _canvas(target: io.BytesIO, **options: object) -> object:
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.pdfgen import canvas

    if CJK_FONT not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(UnicodeCIDFont(CJK_FONT))
    return canvas.Canvas(target, **options)  # type: ignore[arg-type]


def pdf_bytes(
    pages: Sequence[Sequence[tuple[str, float]]],
    *,
    title: str | None = None,
    outline: Sequence[tuple[int, int, str]] = (),
    images: Sequence[int] = (),
    framed_images: Sequence[int] = (),
    user_password: str | None = None,
) -> bytes:
    """A PDF whose page i draws lines (text, font size) top down; outline entries are (page, level,
    title); pages listed in images get a drawn image, in framed_images an image inside a form XObject
    (as scanners write it); with user_password it is encrypted."""
    from reportlab.lib.utils import ImageReader

    target = io.BytesIO()
    options: dict[str, object] = {}
    if user_password is not None:
        from reportlab.lib.pdfencrypt import StandardEncryption

        options["encrypt"] = StandardEncryption(user_password, canPrint=1)
    pdf = _canvas(target, **options)
    if title is not None:
        pdf.setTitle(title)  # type: ignore[attr-defined]
    for index, lines in enumerate(pages):
        y = 780.0
        for text, size in lines:
            pdf.setFont(CJK_FONT, size)  # type: ignore[attr-defined]
            pdf.drawString(56, y, text)  # type: ignore[attr-defined]
            y -= size * 1.4
        if index in images:
            pdf.drawImage(ImageReader(_png()), 56, 200, width=200, height=200)  # type: ignore[attr-defined]
        if index in framed_images:
            pdf.beginForm(f"scan{index}")  # type: ignore[attr-defined]
            pdf.drawImage(ImageReader(_png()), 0, 0, width=500, height=700)  # type: ignore[attr-defined]
            pdf.endForm()  # type: ignore[attr-defined]
            pdf.doForm(f"scan{index}")  # type: ignore[attr-defined]
        for page, level, entry in outline:
            if page == index:
                key = f"p{index}-{entry}"
                pdf.bookmarkPage(key)  # type: ignore[attr-defined]
                pdf.addOutlineEntry(entry, key, level=level)  # type: ignore[attr-defined]
        pdf.showPage()  # type: ignore[attr-defined]
    pdf.save()  # type: ignore[attr-defined]
    return target.getvalue()


def _png() -> io.BytesIO:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("L", (64, 64), 128).save(buffer, format="PNG")
    buffer.seek(0)
    return buffer


def docx_bytes(*, title: str | None = None, build: object = None) -> bytes:
    """A Word document: a Title, headings, a bulleted list and a table (see the lines below)."""
    import docx

    document = docx.Document()
    if title is not None:
        document.core_properties.title = title
    document.add_paragraph("员工手册", style="Title")
    document.add_heading("第一章 总则", level=1)
    document.add_paragraph("本手册适用于全体员工。")
    document.add_heading("考勤", level=2)
    document.add_paragraph("迟到三次记旷工一天。")
    document.add_paragraph("上班打卡", style="List Bullet")
    document.add_paragraph("下班打卡", style="List Bullet")
    document.add_heading("第二章 报销", level=1)
    table = document.add_table(rows=3, cols=3)
    for row, cells in zip(
        table.rows,
        [("项目", "上限", "审批人"), ("差旅", "5000", "部门经理"), ("餐费", "200", "主管")],
        strict=True,
    ):
        for cell, text in zip(row.cells, cells, strict=True):
            cell.text = text
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def pptx_bytes(*, title: str | None = None) -> bytes:
    """A deck: a titled slide with bullets and notes, an untitled one, a slide with a table."""
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    if title is not None:
        deck.core_properties.title = title
    first = deck.slides.add_slide(deck.slide_layouts[1])
    first.shapes.title.text = "Q3 results"
    body = first.placeholders[1].text_frame
    body.text = "Revenue grew 12 percent"
    item = body.add_paragraph()
    item.text = "Churn fell to 2 percent"
    item.level = 1
    first.notes_slide.notes_text_frame.text = "Mention the new Berlin office."
    blank = deck.slides.add_slide(deck.slide_layouts[6])
    box = blank.shapes.add_textbox(Inches(1), Inches(1), Inches(5), Inches(1))
    box.text_frame.text = "An untitled slide about hiring plans"
    tabled = deck.slides.add_slide(deck.slide_layouts[5])
    tabled.shapes.title.text = "Budget"
    shape = tabled.shapes.add_table(3, 2, Inches(1), Inches(2), Inches(6), Inches(2))
    for r, cells in enumerate([("Team", "Budget"), ("Sales", "300k"), ("Support", "120k")]):
        for c, text in enumerate(cells):
            shape.table.cell(r, c).text = text
    buffer = io.BytesIO()
    deck.save(buffer)
    return buffer.getvalue()


def xlsx_bytes(sheets: dict[str, list[list[object]]], *, title: str | None = None) -> bytes:
    """A workbook with the given sheets (rows of values, from row 1)."""
    import openpyxl

    workbook = openpyxl.Workbook()
    workbook.remove(workbook.active)
    if title is not None:
        workbook.properties.title = title
    for name, rows in sheets.items():
        sheet = workbook.create_sheet(name)
        for row in rows:
            sheet.append(row)
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def zip_bytes(members: dict[str, bytes], *, compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    """A zip archive of the given members."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def encrypted_office(data: bytes, password: str = "secret") -> bytes:
    """An Office Open XML file encrypted with a password (an OLE container, as Office writes it)."""
    from msoffcrypto.format.ooxml import OOXMLFile

    out = io.BytesIO()
    OOXMLFile(io.BytesIO(data)).encrypt(password, out)
    return out.getvalue()


def handbook_pages() -> list[list[tuple[str, float]]]:
    """Four pages of a Chinese handbook: a title page, a chapter over two pages, a sentence on page 3."""
    return [
        [("员工手册", 24), ("2024 年版", 12)],
        [("第三章 考勤", 18), ("员工每天九点上班，弹性时间为半小时。", 11), ("迟到三次记旷工一天。", 11)],
        [("加班需提前在系统中申请，经主管批准后计入调休。", 11), ("调休假须在三个月内使用完毕。", 11)],
        [("第四章 休假", 18), ("年假为每年十五个工作日。", 11)],
    ]


def write(path: Path, data: bytes | str) -> Path:
    """Write data (text as UTF-8) to path, making folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path
