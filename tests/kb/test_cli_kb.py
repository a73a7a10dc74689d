"""The `kb ingest`, `kb search` and `kb docs` commands end to end, on a small corpus and the offline embedder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import chromadb
import pytest

from adapters.knowledge.chroma.catalog import collection_name
from bot.cli import main

HANDBOOK = """# 员工手册

## 年假

入职满一年的员工可享受五天带薪年假,年假应在当年休完。

## 报销

差旅费用应在出差结束后三十日内提交报销申请,逾期不予报销。
"""


def write_corpus(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "handbook.md").write_text(HANDBOOK, encoding="utf-8")
    (folder / "jvm.txt").write_text(
        "Java 虚拟机通过垃圾回收自动管理堆内存,常见收集器有 G1 和 ZGC。", encoding="utf-8"
    )
    (folder / "deploy.html").write_text(
        "<html><head><title>Deploy guide</title></head><body><h1>Deploy</h1>"
        "<p>Run the deploy script with the release tag, then watch the dashboard.</p></body></html>",
        encoding="utf-8",
    )
    (folder / "image.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00")
    (folder / "empty.txt").write_text("", encoding="utf-8")
    return folder


def kb(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def search_json(capsys: pytest.CaptureFixture[str], query: str, *extra: str) -> dict[str, Any]:
    code, out, err = kb(capsys, "search", query, "--dataset", "team", "--json", *extra)
    assert code == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


@pytest.fixture
def corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    folder = write_corpus(tmp_path / "corpus")
    code, _, err = kb(capsys, "ingest", str(folder), "--dataset", "team")
    assert code == 0, err
    return folder


def test_ingest_prints_a_summary_and_skips_binary_and_empty_files_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A first ingest adds every file with text, warns about the binary and the empty one (which never
    become documents), and prints the summary with a count per reason."""
    folder = write_corpus(tmp_path / "corpus")
    code, out, err = kb(capsys, "ingest", str(folder), "--dataset", "team")
    assert code == 0
    assert out.startswith("files 5 · chunks added 4 / unchanged 0 / removed 0 · ")
    assert "documents: 3 new, 0 changed, 0 unchanged, 0 removed, 2 skipped" in out
    assert "skipped: 1 × binary file, 1 × empty file" in out
    assert f"warning: skipped {folder / 'image.md'}: binary file (a PNG image)" in err
    assert f"warning: skipped {folder / 'empty.txt'}: empty file" in err


def test_reingesting_unchanged_files_writes_nothing(
    corpus: Path, isolated_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A second ingest adds 0 chunks and leaves the collection and every catalog entry untouched."""
    collection = chromadb.PersistentClient(path=str(isolated_env / "chroma")).get_collection(
        collection_name("team"), embedding_function=None
    )
    count = collection.count()
    before = kb(capsys, "docs", "list", "--dataset", "team", "--json")[1]
    code, out, _ = kb(capsys, "ingest", str(corpus), "--dataset", "team")
    assert code == 0
    assert out.startswith("files 5 · chunks added 0 / unchanged 4 / removed 0 · ")
    assert kb(capsys, "docs", "list", "--dataset", "team", "--json")[1] == before
    assert collection.count() == count == 4


def test_changed_file_is_replaced_and_removed_file_pruned(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """After editing one file and deleting another, ingest --prune replaces the edited chunk only (its
    other chunk keeps its embedding) and removes the deleted file's chunks."""
    (corpus / "handbook.md").write_text(HANDBOOK.replace("五天带薪年假", "十天带薪年假"), encoding="utf-8")
    (corpus / "jvm.txt").unlink()
    code, out, _ = kb(capsys, "ingest", str(corpus), "--dataset", "team", "--prune")
    assert code == 0
    assert "chunks added 1 / unchanged 2 / removed 2" in out
    assert "1 changed" in out and "1 removed" in out
    for mode in ("embedding", "keywords", "blend"):
        contents = [h["content"] for h in search_json(capsys, "带薪年假", "--mode", mode)["hits"]]
        assert any("十天带薪年假" in c for c in contents), mode
        assert not any("五天" in c or "虚拟机" in c for c in contents), mode


def test_search_prints_a_table_or_json_with_query_length_tiers(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --top/--threshold the tiers apply (short: 20/0.25, long: 8/0.28); flags override them."""
    code, out, _ = kb(capsys, "search", "带薪年假", "--dataset", "team")
    assert code == 0
    lines = out.splitlines()
    assert "score" in lines[0] and "document" in lines[0] and "snippet" in lines[0]
    assert "handbook" in lines[1] and "年假" in lines[1]
    short = search_json(capsys, "JVM")
    assert (short["limit"], short["threshold"], short["mode"]) == (20, 0.25, "blend")
    assert short["hits"][0]["document"] == "jvm"
    long = search_json(capsys, "员工出差结束以后多少天之内需要提交报销申请")
    assert (long["limit"], long["threshold"]) == (8, 0.28)
    assert long["hits"][0]["heading"] == "员工手册 > 报销"
    custom = search_json(capsys, "JVM", "--top", "2", "--threshold", "0.1", "--mode", "embedding")
    assert (custom["limit"], custom["threshold"], custom["mode"]) == (2, 0.1, "embedding")
    assert len(custom["hits"]) <= 2
    assert search_json(capsys, "JVM", "--top", "500")["limit"] == 50


def test_search_errors_print_a_message_and_exit_2(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown mode, a blank query or an unknown dataset exits 2 with a readable message."""
    code, _, err = kb(capsys, "search", "deploy", "--dataset", "team", "--mode", "fuzzy")
    assert code == 2 and "Unknown search mode 'fuzzy'" in err
    code, _, err = kb(capsys, "search", "   ", "--dataset", "team")
    assert code == 2 and "error:" in err
    code, _, err = kb(capsys, "search", "deploy", "--dataset", "nope")
    assert code == 2 and "No such dataset: nope (available: team)" in err


def test_docs_disable_enable_and_delete(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Disabled documents vanish from every mode until enabled; delete by id prefix removes the document."""
    code, out, _ = kb(capsys, "docs", "list", "--dataset", "team")
    assert code == 0 and "handbook" in out and "3 documents, 4 chunks" in out
    assert kb(capsys, "docs", "disable", "handbook", "--dataset", "team")[0] == 0
    for mode in ("embedding", "keywords", "blend"):
        hits = search_json(capsys, "带薪年假", "--mode", mode, "--threshold", "0")["hits"]
        assert all(h["document"] != "handbook" for h in hits), mode
    assert "DISABLED" in kb(capsys, "docs", "list", "--dataset", "team")[1]
    assert kb(capsys, "docs", "enable", "handbook", "--dataset", "team")[0] == 0
    assert search_json(capsys, "带薪年假")["hits"][0]["document"] == "handbook"
    documents = json.loads(kb(capsys, "docs", "list", "--dataset", "team", "--json")[1])
    deploy_id = next(d["id"] for d in documents if d["name"] == "deploy")
    code, out, _ = kb(capsys, "docs", "delete", deploy_id[:8], "--dataset", "team")
    assert code == 0 and "1 chunks removed" in out
    assert all(
        h["document"] != "deploy" for h in search_json(capsys, "deploy script", "--threshold", "0")["hits"]
    )
    code, _, err = kb(capsys, "docs", "disable", "missing-doc", "--dataset", "team")
    assert code == 2 and "No document 'missing-doc'" in err


def test_ingest_with_another_embedding_model_is_refused(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Re-ingesting with a different --embedding is a clear error that writes nothing."""
    code, out, err = kb(
        capsys, "ingest", str(corpus), "--dataset", "team", "--embedding", "text-embedding-3-small"
    )
    assert code == 2
    assert "use-multilingual-v3" in err and out == ""


def test_python_m_bot_runs_ingest_and_search(tmp_path: Path) -> None:
    """`python -m bot` (the kb entry point) ingests and searches in separate processes."""
    folder = write_corpus(tmp_path / "corpus")
    env = {**os.environ, "KB_HOME": str(tmp_path / "home")}
    root = Path(__file__).resolve().parents[2]

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "bot", *argv],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    ingested = run("ingest", str(folder), "--dataset", "团队手册")
    assert ingested.returncode == 0, ingested.stderr
    assert "chunks added 4" in ingested.stdout
    searched = run("search", "Java 虚拟机", "--dataset", "团队手册", "--json", "--mode", "keywords")
    assert searched.returncode == 0, searched.stderr
    assert json.loads(searched.stdout)["hits"][0]["document"] == "jvm"
