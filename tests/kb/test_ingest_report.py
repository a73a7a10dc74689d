"""What `kb ingest` reports for every path: missing paths, skipped files and their reasons, empty files,
the exit code when nothing was ingested; and re-ingesting a changed document re-embeds only its changed
chunks (counted at the embedder)."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import pytest

from adapters.knowledge.document_readers import UnreadableDocument, read_document
from bot.cli import main
from core.knowledge.chunking import chunk_markdown
from core.knowledge.ingest import ingest
from core.knowledge.ingest_plan import TitledDocument, document_id
from core.models import NOWHERE, SearchRequest
from tests.kb.kb_support import CountingEmbedder, ingest_one, make_kb

LAWS = Path(__file__).resolve().parents[3] / "shared" / "data" / "zh_laws"
CONSTITUTION = LAWS / "宪法"
WORDS = "员工 报销 差旅 审批 预算 合同 安全 设备 账号 培训 假期 流程 部门 经理 材料 系统 数据 客户".split()


def kb(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_path_that_does_not_exist_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A missing path exits 2 before anything is read or written, naming the path."""
    real = tmp_path / "real.md"
    real.write_text("# A\n\ntext\n", encoding="utf-8")
    code, out, err = kb(capsys, "ingest", str(real), str(tmp_path / "does not exist"), "--dataset", "d")
    assert (code, out) == (2, "")
    assert err == f"error: No such file or folder: {tmp_path / 'does not exist'}\n"
    assert kb(capsys, "docs", "list", "--dataset", "d")[0] == 2  # the dataset was never created


def _folder(root: Path) -> Path:
    root.mkdir()
    (root / "guide.md").write_text("# 指南\n\n入职第一天领取工牌和电脑。\n", encoding="utf-8")
    (root / "sub").mkdir()
    (root / "sub" / "report.pdf").write_bytes(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    (root / "sub" / "slides.pptx").write_bytes(b"PK\x03\x04" + b"\x00" * 40)
    (root / "sub" / "empty.md").write_text("", encoding="utf-8")
    (root / "sub" / "blank.txt").write_text("  \n\t\n", encoding="utf-8")
    (root / "sub" / "_index.md").write_text("---\nbookCollapseSection: true\n---\n", encoding="utf-8")
    (root / "sub" / "headings.md").write_text("# 标题\n\n## 小节\n", encoding="utf-8")
    (root / ".hidden.md").write_text("hidden", encoding="utf-8")
    return root


def test_every_skipped_file_in_a_folder_is_listed_with_its_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Corrupt, empty, whitespace-only, front-matter-only and headings-only files inside a folder are
    each reported with a reason and counted per reason; none becomes a document."""
    folder = _folder(tmp_path / "docs")
    code, out, err = kb(capsys, "ingest", str(folder), "--dataset", "d")
    assert code == 0, err
    assert "documents: 1 new, 0 changed, 0 unchanged, 0 removed, 6 skipped" in out
    assert (
        "skipped: 2 × empty file, 1 × corrupt PDF, 1 × corrupt file, 1 × front matter or comments only,"
        " no text, 1 × headings only, no text"
    ) in out
    sub = folder / "sub"
    for name, reason in (
        ("report.pdf", "corrupt PDF (Stream has ended unexpectedly)"),
        ("slides.pptx", "corrupt file (a damaged ZIP container: File is not a zip file)"),
        ("empty.md", "empty file"),
        ("blank.txt", "empty file"),
        ("_index.md", "front matter or comments only, no text"),
        ("headings.md", "headings only, no text"),
    ):
        assert f"warning: skipped {sub / name}: {reason}" in err, name
    assert ".hidden.md" not in err
    documents = json.loads(kb(capsys, "docs", "list", "--dataset", "d", "--json")[1])
    assert [doc["name"] for doc in documents] == ["guide"]


def test_nothing_ingested_is_a_failure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """When every file is skipped the summary is printed and the exit code is 1; an empty folder too."""
    folder = tmp_path / "only-skipped"
    folder.mkdir()
    (folder / "a.pdf").write_bytes(b"%PDF-1.4")
    (folder / "b.md").write_text("\n", encoding="utf-8")
    code, out, err = kb(capsys, "ingest", str(folder), "--dataset", "d")
    assert code == 1
    assert "documents: 0 new, 0 changed, 0 unchanged, 0 removed, 2 skipped" in out
    assert err.endswith("error: nothing was ingested: all 2 files were skipped\n")
    empty = tmp_path / "empty-folder"
    empty.mkdir()
    code, _, err = kb(capsys, "ingest", str(empty), "--dataset", "d")
    assert code == 1 and err == f"error: no files found in {empty}\n"


@pytest.mark.skipif(not CONSTITUTION.is_dir(), reason="the shared law corpus is not beside this checkout")
def test_the_law_corpus_front_matter_index_files_never_become_documents(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """zh_laws/宪法/_index.md (front matter only) is skipped with its reason; the six laws are ingested."""
    code, out, err = kb(capsys, "ingest", str(CONSTITUTION), "--dataset", "laws")
    assert code == 0, err
    assert f"warning: skipped {CONSTITUTION / '_index.md'}: front matter or comments only, no text" in err
    assert "documents: 6 new, 0 changed, 0 unchanged, 0 removed, 1 skipped" in out
    names = [doc["name"] for doc in json.loads(kb(capsys, "docs", "list", "--dataset", "laws", "--json")[1])]
    assert "_index" not in names and len(names) == 6


async def test_a_blank_file_stored_earlier_as_a_document_is_removed(tmp_path: Path) -> None:
    """A 0-chunk document left by an earlier version for an empty file is deleted on the next ingest."""
    path = tmp_path / "empty.md"
    path.write_text("", encoding="utf-8")
    embedder = CountingEmbedder()
    store = make_kb(tmp_path / "home", embedder)
    source = str(path.resolve())
    stale = TitledDocument("d", document_id("d", source), "empty", source, "x/t400", True, 0, title="empty")
    await store.replace_documents("d", [(stale, [])], embedding_model=embedder.name)
    assert len(await store.list_documents("d")) == 1
    summary = await ingest_one(store, path, embedder)
    assert (summary.removed, summary.skipped, summary.skipped_files) == (1, 1, ((str(path), "empty file"),))
    assert await store.list_documents("d") == []
    await store.close()


def _handbook(seed: int = 3) -> tuple[str, list[str]]:
    """A 100-chunk handbook: 25 sections of 8 paragraphs (~140 tokens each, two per chunk)."""
    rng = random.Random(seed)
    paragraphs = [f"第{i}段:" + "".join(rng.choice(WORDS) for _ in range(60)) + "。" for i in range(200)]
    sections = [
        f"## 第{index}节\n\n" + "\n\n".join(paragraphs[index * 8 : index * 8 + 8]) for index in range(25)
    ]
    return "# 员工手册\n\n" + "\n\n".join(sections) + "\n", paragraphs


@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(lambda text: text.replace("员工", "职员", 1), id="a-word-changed"),
        pytest.param(
            lambda text: text + "另外,本条自发布之日起施行,由人力资源部负责解释。", id="a-sentence-added"
        ),
    ],
)
async def test_a_changed_paragraph_in_a_100_chunk_document_re_embeds_at_most_3_chunks(
    tmp_path: Path, edit: object
) -> None:
    """Re-ingesting after one paragraph changed embeds ≤ 3 texts (counted at the embedder); the other
    chunks keep their vectors and are reported unchanged, and search finds the new text."""
    text, paragraphs = _handbook()
    path = tmp_path / "handbook.md"
    path.write_text(text, encoding="utf-8")
    embedder = CountingEmbedder()
    store = make_kb(tmp_path / "home", embedder)
    options = {"read": read_document, "embedding_model": embedder.name, "unreadable": (UnreadableDocument,)}
    first = await ingest(store, "d", [path], **options)  # type: ignore[arg-type]
    assert (first.chunks_added, embedder.texts_embedded) == (100, 100)
    target = paragraphs[101]
    changed = edit(target)  # type: ignore[operator]
    path.write_text(text.replace(target, changed), encoding="utf-8")
    embedder.texts_embedded = 0
    second = await ingest(store, "d", [path], **options)  # type: ignore[arg-type]
    assert second.changed == 1 and 1 <= embedder.texts_embedded <= 3
    assert second.chunks_added == embedder.texts_embedded == second.chunks_removed
    assert second.chunks_unchanged == 100 - second.chunks_added
    [info] = await store.list_documents("d")
    assert info.chunk_count == 100
    from core.models import SearchRequest

    hits = await store.search(SearchRequest(query=changed[:40], datasets=("d",), mode="keywords", limit=3))
    assert hits and changed in hits[0].content
    await store.close()


async def test_a_document_chunked_by_an_earlier_chunker_is_chunked_again_re_embedding_only_what_changed(
    tmp_path: Path,
) -> None:
    """A law stored by the chunker before continued articles were recorded (fingerprint without a chunker
    version) is chunked again on the next ingest: its continuation chunks learn their article and are
    embedded again (the article joins their embedded trail); every other chunk keeps its vector."""
    items = "\n\n".join(
        f"（{n}）因第{n}种重大立功表现,依照本法第三十九条的规定可以减轻处罚。" for n in range(1, 31)
    )
    law = f"# 刑法\n\n## 第四章\n\n第七十八条 有下列表现之一的,应当减刑:\n\n{items}\n\n减刑以后的刑期不能少于一半。"
    path = tmp_path / "刑法.md"
    path.write_text(law, encoding="utf-8")
    source = str(path.resolve())
    chunks = chunk_markdown(law)
    assert any(chunk.location.within for chunk in chunks)
    older = [replace(chunk, location=NOWHERE) for chunk in chunks]
    embedder = CountingEmbedder()
    store = make_kb(tmp_path / "home", embedder)
    before = f"{read_document(path).content_hash}/t400"  # the fingerprint of the same bytes before versions
    stale = TitledDocument(
        "d", document_id("d", source), "刑法", source, before, True, len(older), title="刑法"
    )
    await store.replace_documents("d", [(stale, older)], embedding_model=embedder.name)
    embedded = embedder.texts_embedded
    summary = await ingest_one(store, path, embedder)
    await store.flush()
    hits = await store.search(SearchRequest("减刑以后的刑期不能少于一半", ("d",), mode="keywords", limit=1))
    await store.close()
    continuations = sum(1 for chunk in chunks if chunk.location.within)
    assert (summary.changed, summary.chunks_unchanged) == (1, len(chunks) - continuations)
    assert embedder.texts_embedded == embedded + continuations
    assert hits[0].location.within == "第七十八条"
