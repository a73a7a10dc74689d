"""Ingesting every format into the real knowledge base: kb ingest's report, locations in hits and citations."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import chromadb
import pytest

from adapters.knowledge.chroma.catalog import collection_name
from adapters.knowledge.document_readers import (
    ReadDocument,
    ReadLimits,
    UnreadableDocument,
    iter_document_paths,
    read_document,
)
from adapters.slack.rendering.final_messages import source_lines
from bot.cli import main
from core.answering.answer import citations, evidence_block, render_sources
from core.knowledge.ingest import ingest
from core.models import SearchRequest
from core.record import CitedSource
from tests.kb.document_files import (
    docx_bytes,
    handbook_pages,
    pdf_bytes,
    pptx_bytes,
    write,
    xlsx_bytes,
    zip_bytes,
)
from tests.kb.kb_support import CountingEmbedder, make_kb

PAGE_3 = "加班需提前在系统中申请，经主管批准后计入调休。"


def one_of_each() -> dict[str, bytes]:
    return {
        "员工手册.pdf": pdf_bytes(handbook_pages(), title="员工手册"),
        "policy.docx": docx_bytes(),
        "deck.pptx": pptx_bytes(),
        "budget.xlsx": xlsx_bytes({"Q1": [["Team", "Amount"], ["Sales", 300], ["Ops", 120]]}),
        "people.csv": b"name,team\nAnn,Sales\nBo,Ops\n",
        "guide.md": b"# Guide\n\n## Deploy\n\nRun make deploy with the release tag.\n",
        "wiki.html": b"<title>Wiki</title><h1>Onboarding</h1><p>Ask IT for a laptop on day one.</p>",
        "notes.txt": b"Plain notes about the office plants.\n",
    }


def write_folder(folder: Path) -> None:
    members = one_of_each()
    for name, data in members.items():
        write(folder / name, data)
    write(folder / "export.zip", zip_bytes({f"Space/{name}": data for name, data in members.items()}))
    write(folder / "scan.pdf", pdf_bytes([[], []], images=[0, 1]))
    write(folder / "locked.pdf", pdf_bytes(handbook_pages(), user_password="secret"))
    write(folder / "broken.docx", b"PK\x03\x04 damaged")
    write(folder / "partly-scanned.pdf", pdf_bytes([[("第一页有文字。", 11)], []], images=[1]))


def read_noting_the_process(path: Path) -> ReadDocument:
    """read_document, with the reading process's id appended to the document name."""
    document = read_document(path, limits=ReadLimits())
    return replace(document, name=f"{document.name}@{os.getpid()}")


def kb(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_kb_ingest_of_every_format_and_a_zip_reports_skips_and_search_shows_the_page(
    tmp_path: Path, isolated_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """kb ingest prints one warning line per skipped file (and one for left-out pages) and the chunk
    counts; kb search finds page 3's sentence in the PDF and in the zip's copy, showing p. 3."""
    folder = tmp_path / "docs"
    write_folder(folder)
    code, out, err = kb(capsys, "ingest", str(folder), "--dataset", "mixed")
    assert code == 0, err
    skipped = sorted(line for line in err.splitlines() if line.startswith("warning: skipped"))
    assert skipped == [
        f"warning: skipped {folder / 'broken.docx'}: corrupt file (a damaged ZIP container: File is not a zip file)",
        f"warning: skipped {folder / 'locked.pdf'}: password-protected PDF (it needs a password to open)",
        f"warning: skipped {folder / 'scan.pdf'}: no text layer (scanned?) — OCR not supported",
    ]
    assert (
        f"warning: {folder / 'partly-scanned.pdf'}: page 2: no text layer (scanned?) — OCR not supported; skipped"
        in err.splitlines()
    )
    assert out.startswith(
        "files 20 · chunks added "
    )  # 8 files, the zip's 8 members, 4 skipped or partly read
    assert "documents: 17 new, 0 changed, 0 unchanged, 0 removed, 3 skipped" in out

    code, table, err = kb(capsys, "search", PAGE_3, "--dataset", "mixed", "--mode", "keywords")
    assert code == 0, err
    lines = table.splitlines()
    assert "where" in lines[0]
    assert "员工手册.pdf" in lines[1] and "p. 3" in lines[1] and "第三章 考勤" in lines[1]
    assert any("Space/员工手册.pdf" in line and "p. 3" in line for line in lines[1:3])

    code, raw, _ = kb(capsys, "search", PAGE_3, "--dataset", "mixed", "--json")
    top = json.loads(raw)["hits"][0]
    assert (top["page"], top["heading"]) == (3, "员工手册 > 第三章 考勤")
    code, listing, _ = kb(capsys, "docs", "list", "--dataset", "mixed")
    assert "Space/deck.pptx" in listing and "budget.xlsx" in listing


async def test_hits_and_chunk_metadata_carry_page_slide_sheet_and_rows(tmp_path: Path) -> None:
    """Stored chunks hold page / slide / sheet and row keys (Markdown chunks none), and every search
    mode's hits carry them back."""
    folder = tmp_path / "docs"
    for name, data in one_of_each().items():
        write(folder / name, data)
    index = make_kb(tmp_path / "home", CountingEmbedder("bag", 64))
    paths = list(iter_document_paths([folder]))
    summary = await ingest(
        index, "ds", paths, read=read_document, embedding_model="bag", unreadable=(UnreadableDocument,)
    )
    assert summary.skipped == 0
    await index.flush()
    for mode in ("keywords", "embedding", "blend"):
        hits = await index.search(SearchRequest(PAGE_3, ("ds",), mode=mode, limit=3))  # type: ignore[arg-type]
        assert hits[0].document_name == "员工手册.pdf" and hits[0].location.page == 3, mode
    hits = await index.search(SearchRequest("Team Sales Amount 300", ("ds",), mode="keywords", limit=1))
    assert hits[0].location.label() == "sheet Q1, rows 2–3"
    assert hits[0].title == "budget"  # a workbook without a title of its own: its file name
    guide = await index.search(SearchRequest("make deploy release tag", ("ds",), mode="keywords", limit=1))
    assert (guide[0].document_name, guide[0].title) == ("guide", "Guide")
    hits = await index.search(SearchRequest("Berlin office notes", ("ds",), mode="keywords", limit=1))
    assert (hits[0].document_name, hits[0].location.slide, hits[0].heading) == ("deck.pptx", 1, "Q3 results")
    await index.close()
    stored = chromadb.PersistentClient(path=str(tmp_path / "home" / "chroma")).get_collection(
        collection_name("ds"), embedding_function=None
    )
    metadatas = stored.get(include=["metadatas"])["metadatas"]
    keys = {key for meta in metadatas for key in meta}
    assert {"page", "slide", "sheet", "row_start", "row_end"} <= keys
    markdown = [meta for meta in metadatas if "make deploy" in str(meta["text"])]
    assert set(markdown[0]) == {"document_id", "version", "position", "heading", "text", "hash"}


async def test_a_failing_file_leaves_nothing_behind(tmp_path: Path) -> None:
    """A PDF that breaks while being read is skipped whole: no document, no chunk of its readable start."""
    whole = pdf_bytes(handbook_pages() * 5)
    path = write(tmp_path / "docs" / "broken.pdf", whole[: len(whole) * 2 // 3])
    index = make_kb(tmp_path / "home", CountingEmbedder("bag", 64))
    summary = await ingest(
        index, "ds", [path], read=read_document, embedding_model="bag", unreadable=(UnreadableDocument,)
    )
    assert (summary.skipped, summary.chunks_added) == (1, 0)
    assert summary.skipped_files[0][1].startswith("corrupt PDF")
    assert await index.list_documents("ds") == []
    await index.close()


def test_citations_name_the_page_in_the_cli_slack_and_the_evidence() -> None:
    """A cited PDF paragraph shows as '[n] 员工手册.pdf p. 12 — 第三章 考勤' under a CLI answer, with the
    page in Slack's source line and in the evidence the model reads."""
    from core.models import Hit, Location

    hit = Hit(
        "c",
        "迟到三次记旷工一天。",
        0.9,
        "hr",
        "d",
        "员工手册.pdf",
        "第三章 考勤",
        "/hr.pdf",
        3,
        Location(page=12),
    )
    slide = Hit(
        "s", "Revenue grew", 0.8, "hr", "e", "deck.pptx", "Q3 results", "/deck.pptx", 0, Location(slide=2)
    )
    items = citations("迟到三次记旷工 [1],营收增长 [2]。", [hit, slide])
    assert render_sources(items, "zh").splitlines()[1:] == [
        "[1] 员工手册.pdf p. 12 — 第三章 考勤",
        "[2] deck.pptx slide 2 — Q3 results",
    ]
    assert source_lines(items) == [
        "[1] 员工手册.pdf p. 12 › 第三章 考勤",
        "[2] deck.pptx slide 2 › Q3 results",
    ]
    assert 'document="员工手册.pdf p. 12 | 第三章 考勤"' in evidence_block([hit]).text
    stored = [CitedSource.from_json(json.loads(json.dumps(item.to_json()))) for item in items]  # as kept
    assert stored == list(items)
    assert render_sources(stored, "en").splitlines()[1] == "[1] 员工手册.pdf p. 12 — 第三章 考勤"


async def test_documents_are_read_in_the_ingest_worker_processes(tmp_path: Path) -> None:
    """PDF, Office and zip members are read and chunked in the worker processes, giving the same
    chunks and locations as reading them in threads."""
    folder = tmp_path / "docs"
    write_folder(folder)
    paths = list(iter_document_paths([folder]))
    results = []
    for name, min_bytes in (("workers", 0), ("threads", 10**9)):
        index = make_kb(tmp_path / name, CountingEmbedder("bag", 64))
        summary = await ingest(
            index,
            "ds",
            paths,
            read=read_noting_the_process,
            embedding_model="bag",
            unreadable=(UnreadableDocument,),
            worker_min_bytes=min_bytes,
        )
        documents = await index.list_documents("ds")
        readers = {info.name.rsplit("@", 1)[1] for info in documents}
        assert (str(os.getpid()) not in readers) == (name == "workers"), readers
        hits = await index.search(SearchRequest(PAGE_3, ("ds",), mode="keywords", limit=5))
        results.append((summary.chunks_added, summary.skipped, [(h.content, h.location) for h in hits]))
        await index.close()
    assert results[0] == results[1]
    assert results[0][1] == 3 and results[0][2][0][1].page == 3


def test_kb_max_file_mb_refuses_a_bigger_file_with_its_size(
    tmp_path: Path, isolated_env: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """KB_MAX_FILE_MB reaches kb ingest: a file over it is skipped with its size, the rest ingested."""
    monkeypatch.setenv("KB_MAX_FILE_MB", "1")
    write(tmp_path / "docs" / "big.txt", "大" * 600_000)  # 1.7 MB of UTF-8
    write(tmp_path / "docs" / "small.md", "# Small\n\nfits\n")
    code, out, err = kb(capsys, "ingest", str(tmp_path / "docs"), "--dataset", "limits")
    assert code == 0, err
    assert (
        f"warning: skipped {tmp_path / 'docs' / 'big.txt'}: too large (1.7 MB; the limit is 1 MB, KB_MAX_FILE_MB)"
        in err
    )
    assert "documents: 1 new, 0 changed, 0 unchanged, 0 removed, 1 skipped" in out


async def test_unchanged_files_are_recognised_by_their_bytes_before_they_are_parsed(tmp_path: Path) -> None:
    """A re-ingest with content_hash parses only the file that changed (and, in an archive, only the
    changed member); the unchanged PDF and Word files are not read by their parsers at all."""
    from adapters.knowledge.document_readers import content_hash

    folder = tmp_path / "docs"
    for name, data in one_of_each().items():
        write(folder / name, data)
    index = make_kb(tmp_path / "home", CountingEmbedder("bag", 64))
    parsed: list[str] = []

    def counting_read(path: Path) -> Any:
        parsed.append(path.name)
        return read_document(path)

    async def run() -> Any:
        paths = list(iter_document_paths([folder]))
        return await ingest(
            index,
            "ds",
            paths,
            read=counting_read,
            content_hash=content_hash,
            embedding_model="bag",
            unreadable=(UnreadableDocument,),
        )

    first = await run()
    assert len(parsed) == first.added > 3
    parsed.clear()
    (folder / "guide.md").write_text("# Guide\n\nRun make release now.\n", encoding="utf-8")
    second = await run()
    assert parsed == ["guide.md"]
    assert (second.changed, second.unchanged) == (1, first.added - 1)  # the PDF and the Office files too
    await index.close()


async def test_a_law_article_split_over_chunks_is_cited_by_its_number(tmp_path: Path) -> None:
    """An article too long for one chunk, ingested and found by its last sentence, comes back knowing the
    article it continues, is found by that article's number too, and the answer quoting it cites that
    article (not ¶ n)."""
    items = "\n\n".join(
        f"（{n}）因第{n}种重大立功表现,依照本法第三十九条的规定可以减轻处罚。" for n in range(1, 31)
    )
    law = (
        f"# 刑法\n\n## 第四章 刑罚的具体运用\n\n第七十八条 被判处管制、拘役的犯罪分子,有下列表现之一的,应当减刑:"
        f"\n\n{items}\n\n减刑以后实际执行的刑期不能少于原判刑期的二分之一。\n\n第七十九条 减刑由中级以上人民法院审理。"
    )
    path = write(tmp_path / "docs" / "刑法.md", law.encode())
    index = make_kb(tmp_path / "home", CountingEmbedder("bag", 64))
    await ingest(
        index, "ds", [path], read=read_document, embedding_model="bag", unreadable=(UnreadableDocument,)
    )
    await index.flush()
    found = await index.search(SearchRequest("实际执行的刑期不能少于", ("ds",), mode="keywords", limit=1))
    later = await index.search(SearchRequest("中级以上人民法院审理", ("ds",), mode="keywords", limit=1))
    by_number = await index.search(SearchRequest("第七十八条", ("ds",), mode="keywords", limit=5))
    await index.close()
    assert found[0].location.within == "第七十八条" and later[0].location.within == ""
    assert found[0].id in {
        hit.id for hit in by_number
    }  # the article's number is indexed with its continuation
    answer = "- 减刑以后实际执行的刑期不能少于原判刑期的二分之一。 [1]\n- 减刑由中级以上人民法院审理。 [2]"
    assert render_sources(citations(answer, [found[0], later[0]]), "zh").splitlines()[1:] == [
        "[1] 刑法 第七十八条 — 刑法 > 第四章 刑罚的具体运用",
        "[2] 刑法 第七十九条 — 刑法 > 第四章 刑罚的具体运用",
    ]
