"""The mixed-format part of bench_kb.py: a generated corpus of PDF, Word, PowerPoint and Excel files.

The corpus is written here with writer libraries from CMRC sentences (Chinese): one 300-page PDF (a
heading every 10 pages), 50 Word documents of 6 pages each (Word's rendered page-break marks added so
the reader locates pages), 20 decks of 15 slides with notes, 10 workbooks of 2 sheets x 500 rows. The
same sentences are also written as Markdown files, the baseline every format is compared with.

For each format three figures, in one run: reading and chunking alone in this process (the readers'
own speed), `kb ingest` of that format's folder with embedding excluded (a hash "embedder" whose time
is subtracted), and with the offline USE embedder included. Units per second are pages (PDF, Word),
slides (PowerPoint) and rows (Excel); chunks per second for all, and as a share of Markdown's. The
fixed cost of an ingest run is printed too: it weighs on the smaller folders (316 slides).
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np

from adapters.knowledge.document_readers import iter_document_paths, read_document
from core.knowledge.chunking import chunk_parts

PDF_PAGES = 300
PDF_LINES_PER_PAGE = 30
LINE_CHARS = 38
DOCX_FILES, DOCX_PAGES, DOCX_PARAGRAPHS_PER_PAGE = 50, 6, 6
PPTX_FILES, PPTX_SLIDES = 20, 15
XLSX_FILES, XLSX_SHEETS, XLSX_ROWS = 10, 2, 500


class _Text:
    """An endless, seeded stream of CMRC sentences."""

    def __init__(self, sentences: Sequence[str], seed: int = 11) -> None:
        self.sentences = [s for s in sentences if 8 <= len(s) <= 120]
        self.rng = random.Random(seed)

    def sentence(self) -> str:
        return self.rng.choice(self.sentences)

    def chars(self, count: int) -> str:
        text = ""
        while len(text) < count:
            text += self.sentence()
        return text[:count]


def write_pdf(path: Path, text: _Text) -> list[str]:
    """The 300-page PDF; returns each page's text (for the Markdown baseline)."""
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.pdfgen import canvas

    pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
    pdf = canvas.Canvas(str(path))
    pdf.setTitle("基准手册")
    pages = []
    for page in range(PDF_PAGES):
        y = 790.0
        lines = []
        if page % 10 == 0:
            heading = f"第{page // 10 + 1}章 {text.chars(8)}"
            pdf.setFont("STSong-Light", 18)
            pdf.drawString(50, y, heading)
            y -= 30
            lines.append(f"## {heading}")
        pdf.setFont("STSong-Light", 11)
        for _ in range(PDF_LINES_PER_PAGE if page % 10 else PDF_LINES_PER_PAGE - 3):
            line = text.chars(LINE_CHARS)
            pdf.drawString(50, y, line)
            y -= 15.4
            lines.append(line)
        pdf.showPage()
        pages.append("\n".join(lines))
    pdf.save()
    return pages


def write_docx(path: Path, text: _Text) -> list[str]:
    import docx
    from docx.oxml import OxmlElement

    document = docx.Document()
    document.add_heading(text.chars(10), level=1)
    blocks = []
    for page in range(DOCX_PAGES):
        document.add_heading(f"第{page + 1}节 {text.chars(6)}", level=2)
        for index in range(DOCX_PARAGRAPHS_PER_PAGE):
            paragraph_text = "".join(text.sentence() for _ in range(4))
            paragraph = document.add_paragraph()
            run = paragraph.add_run(paragraph_text)
            if page and index == 0:  # Word's mark of where this page began when it last laid it out
                run._r.insert(0, OxmlElement("w:lastRenderedPageBreak"))
            blocks.append(paragraph_text)
    document.save(str(path))
    return blocks


def write_pptx(path: Path, text: _Text) -> list[str]:
    from pptx import Presentation

    deck = Presentation()
    blocks = []
    for _ in range(PPTX_SLIDES):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = text.chars(12)
        frame = slide.placeholders[1].text_frame
        frame.text = text.sentence()
        for _ in range(3):
            frame.add_paragraph().text = text.sentence()
        notes = text.sentence() + text.sentence()
        slide.notes_slide.notes_text_frame.text = notes
        blocks.append(frame.text + notes)
    deck.save(str(path))
    return blocks


def write_xlsx(path: Path, text: _Text, rng: random.Random) -> list[str]:
    import openpyxl

    workbook = openpyxl.Workbook(write_only=True)
    blocks = []
    for number in range(XLSX_SHEETS):
        sheet = workbook.create_sheet(f"表{number + 1}")
        sheet.append(["编号", "摘要", "金额", "负责人"])
        for row in range(XLSX_ROWS):
            values = [f"R{number}-{row:04d}", text.chars(30), round(rng.uniform(10, 9999), 2), text.chars(3)]
            sheet.append(values)
            blocks.append(" ".join(str(v) for v in values))
    workbook.save(str(path))
    return blocks


def write_corpus(root: Path, sentences: Sequence[str]) -> dict[str, int]:
    """Folders root/<format> of generated files plus root/md (the same text as Markdown); units per format."""
    text = _Text(sentences)
    rng = random.Random(5)
    for name in ("pdf", "docx", "pptx", "xlsx", "md"):
        (root / name).mkdir(parents=True)
    markdown: list[str] = ["# 基准手册", *write_pdf(root / "pdf" / "handbook.pdf", text)]
    for index in range(DOCX_FILES):
        markdown += write_docx(root / "docx" / f"doc{index:03d}.docx", text)
    for index in range(PPTX_FILES):
        markdown += write_pptx(root / "pptx" / f"deck{index:03d}.pptx", text)
    for index in range(XLSX_FILES):
        markdown += write_xlsx(root / "xlsx" / f"book{index:03d}.xlsx", text, rng)
    for index in range(0, len(markdown), 60):  # Markdown files of about the same size as the others
        (root / "md" / f"part{index:05d}.md").write_text("\n\n".join(markdown[index : index + 60]), "utf-8")
    return {
        "pdf": PDF_PAGES,
        "docx": DOCX_FILES * DOCX_PAGES,
        "pptx": PPTX_FILES * PPTX_SLIDES,
        "xlsx": XLSX_FILES * XLSX_SHEETS * XLSX_ROWS,
        "md": len(list((root / "md").iterdir())),
    }


UNITS = {"pdf": "pages", "docx": "pages", "pptx": "slides", "xlsx": "rows", "md": "files"}


class HashEmbedder:
    """Unit vectors from a text's hash: next to no cost, and the little it has is measured and subtracted."""

    def __init__(self, name: str, dimension: int = 512) -> None:
        self._name = name
        self._dimension = dimension
        self.seconds = 0.0

    @property
    def name(self) -> str:
        return self._name

    @property
    def dimension(self) -> int:
        return self._dimension

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        started = time.perf_counter()
        seeds = [int.from_bytes(hashlib.blake2b(t.encode(), digest_size=8).digest(), "little") for t in texts]
        matrix = np.stack([np.random.default_rng(seed).standard_normal(self._dimension) for seed in seeds])
        matrix = (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)
        self.seconds += time.perf_counter() - started
        return cast(list[list[float]], matrix)  # the port accepts any sequence of vectors; an array is one

    async def embed_query(self, text: str) -> list[float]:
        return (await self.embed_documents([text]))[0].tolist()  # type: ignore[attr-defined, no-any-return]


def read_alone(folder: Path) -> tuple[float, int]:
    """Seconds to read and chunk every file of folder in this process, and the chunk count."""
    started = time.perf_counter()
    chunks = 0
    for path in iter_document_paths([folder]):
        chunks += len(chunk_parts(read_document(path).parts))
    return time.perf_counter() - started, chunks


Ingest = Callable[[Path, Path, Any], Awaitable[tuple[Any, Any]]]


async def _timed_ingest(kb_ingest: Ingest, home: Path, folder: Path, embedder: Any) -> tuple[Any, float]:
    """(summary, wall seconds less the time spent in a HashEmbedder) of one kb ingest run."""
    started = time.perf_counter()
    summary, kb = await kb_ingest(home, folder, embedder)
    seconds = time.perf_counter() - started - getattr(embedder, "seconds", 0.0)
    await kb.close()
    return summary, seconds


async def bench_formats(
    workdir: Path, sentences: Sequence[str], kb_ingest: Ingest, model: str
) -> dict[str, float]:
    """The three figures per format (see the module docstring), printed as a table and returned.

    A run's fixed cost (starting the worker processes, opening Chroma, the final keyword-index save)
    weighs on small folders: it is measured the same way on a folder of one short file (and a 1.1 MB
    file skipped at once, so that the workers start as they do for the other folders) and printed.
    """
    from adapters.embedders.local import LocalEmbedder

    root = workdir / "formats"
    started = time.perf_counter()
    units = write_corpus(root, sentences)
    print(
        f"\n== mixed formats (corpus written in {time.perf_counter() - started:.0f} s, not timed)", flush=True
    )
    tiny = root / "tiny"
    tiny.mkdir()
    (tiny / "one.md").write_text("# 一\n\n" + sentences[0], encoding="utf-8")
    (tiny / "padding.pdf").write_bytes(b"\0" * (1100 * 1024))  # skipped at once; its size starts the workers
    _, fixed = await _timed_ingest(kb_ingest, workdir / "formats-tiny", tiny, HashEmbedder(model))
    result: dict[str, float] = {"fixed_cost_s": fixed}
    rows = []
    for name in ("md", "pdf", "docx", "pptx", "xlsx"):
        folder = root / name
        size = sum(p.stat().st_size for p in folder.iterdir())
        alone, chunks = read_alone(folder)
        summary, without = await _timed_ingest(
            kb_ingest, workdir / f"formats-{name}-fast", folder, HashEmbedder(model)
        )
        real, embedded = await _timed_ingest(
            kb_ingest, workdir / f"formats-{name}-use", folder, LocalEmbedder()
        )
        assert summary.chunks_added == real.chunks_added == chunks, (name, summary, chunks)
        figures = {
            "files": float(summary.files),
            "mb": size / 1e6,
            "units": float(units[name]),
            "chunks": float(chunks),
            "read_s": alone,
            "ingest_s": without,
            "embedded_s": embedded,
        }
        for stage in ("read", "ingest", "embedded"):
            figures[f"{stage}_units_per_s"] = units[name] / figures[f"{stage}_s"]
            figures[f"{stage}_chunks_per_s"] = chunks / figures[f"{stage}_s"]
        result.update({f"{name}_{key}": value for key, value in figures.items()})
        rows.append((name, figures))
    baseline = dict(rows)["md"]
    print(
        f"  {'':<5} {'files':>5} {'MB':>5} {'units':>12} {'chunks':>6} | {'read + chunk, one process':<32} | "
        f"{'kb ingest, embedding excluded':<38} | {'kb ingest with the USE embedder':<38}"
    )
    for name, f in rows:
        unit = UNITS[name]
        cells = []
        for stage in ("read", "ingest", "embedded"):
            share = f[f"{stage}_chunks_per_s"] / baseline[f"{stage}_chunks_per_s"]
            cells.append(
                f"{f[f'{stage}_s']:>6.1f} s {f[f'{stage}_units_per_s']:>6.0f} {unit}/s "
                f"{f[f'{stage}_chunks_per_s']:>5.0f} ch/s ({share:>4.0%} of md)"
            )
        print(
            f"  {name:<5} {f['files']:>5.0f} {f['mb']:>5.1f} {f['units']:>6.0f} {unit:<5} {f['chunks']:>6.0f} | "
            + " | ".join(cells),
            flush=True,
        )
    print(
        f"  fixed cost of one kb ingest run (worker start, Chroma, keyword save) on one short file: {fixed:.1f} s",
        flush=True,
    )
    return result
