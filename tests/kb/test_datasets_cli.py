"""`kb datasets list|check|drop|rebuild` on a tiny dataset, sound and damaged, through the command line."""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import chromadb
import pytest

from adapters.knowledge.chroma import dataset as cd
from adapters.knowledge.chroma import health
from adapters.knowledge.chroma.catalog import catalog_name, collection_name
from bot.cli import main

FILES = {
    "parking.md": "# Parking\n\nCars park in lot B; the parking permit is renewed every March.\n",
    "badges.md": "# Visitor badges\n\nVisitors collect a badge at the front desk and return it when leaving.\n",
    "lunch.md": "# Lunch\n\nThe canteen serves lunch from noon to two, with a vegetarian dish every day.\n",
}


def kb(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A KB_HOME with dataset "team" (three one-chunk documents), made once and copied into each test."""
    root = tmp_path_factory.mktemp("datasets")
    folder = root / "docs"
    folder.mkdir()
    for name, text in FILES.items():
        (folder / name).write_text(text, encoding="utf-8")
    home = root / "home"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KB_HOME", str(home))
        assert main(["ingest", str(folder), "--dataset", "team"]) == 0
    yield home


@pytest.fixture
def home(ingested: Path, isolated_env: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """This test's KB_HOME, holding a copy of the ingested dataset."""
    shutil.rmtree(isolated_env)
    shutil.copytree(ingested, isolated_env)
    capsys.readouterr()
    return isolated_env


def top_document(capsys: pytest.CaptureFixture[str], query: str) -> str | None:
    code, out, err = kb(capsys, "search", query, "--dataset", "team", "--mode", "embedding", "--json")
    assert code == 0, err
    hits: list[dict[str, Any]] = json.loads(out)["hits"]
    return hits[0]["document"] if hits else None


def lose_the_vectors(home: Path) -> None:
    """Damage as concurrent writers left it: the chunk collection's HNSW files and Chroma's log are gone,
    so the records (text included) remain but the vector index is empty."""
    database = sqlite3.connect(home / "chroma" / "chroma.sqlite3")
    try:
        [segment] = database.execute(
            "SELECT s.id FROM segments s JOIN collections c ON c.id = s.collection "
            "WHERE s.scope = 'VECTOR' AND c.name = ?",
            (collection_name("team"),),
        ).fetchall()
        database.execute("DELETE FROM embeddings_queue")
        database.commit()
    finally:
        database.close()
    shutil.rmtree(home / "chroma" / segment[0])


def corrupt_the_catalog(home: Path) -> None:
    """The catalog loses the entry of parking.md and claims three chunks for badges.md (it has one)."""
    client = chromadb.PersistentClient(path=str(home / "chroma"))
    try:
        catalog = client.get_collection(catalog_name("team"), embedding_function=None)
        got = catalog.get(include=["metadatas"])
        by_name = {
            meta["name"]: (entry_id, dict(meta))
            for entry_id, meta in zip(got["ids"], got["metadatas"], strict=True)
        }
        catalog.delete(ids=[by_name["parking"][0]])
        badge_id, badge = by_name["badges"]
        catalog.update(ids=[badge_id], metadatas=[{**badge, "chunks": 3}])
    finally:
        client.close()


def test_list_shows_each_dataset_with_documents_chunks_embedder_and_last_change(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`kb datasets list` prints name, documents, chunks, embedder and last change; --json the same fields."""
    code, out, _ = kb(capsys, "datasets", "list")
    assert code == 0
    header, row = out.splitlines()
    assert header.split() == ["name", "documents", "chunks", "embedder", "last", "change"]
    name, documents, chunks, embedder, day, minute = row.split()
    assert (name, documents, chunks, embedder) == ("team", "3", "3", "use-multilingual-v3")
    assert len(day) == 10 and len(minute) == 5
    code, out, _ = kb(capsys, "datasets", "list", "--json")
    [entry] = json.loads(out)
    assert (entry["name"], entry["documents"], entry["chunks"], entry["problem"]) == ("team", 3, 3, "")


def test_check_passes_on_a_sound_dataset_and_unknown_names_are_bad_input(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A freshly ingested dataset checks sound (exit 0); check, drop and rebuild of no such dataset exit 2."""
    code, out, err = kb(capsys, "datasets", "check", "team")
    assert code == 0, out + err
    assert "ok: the catalog, the collection and the keyword index agree" in out
    assert "vector index   3 of 3 live chunks" in out and "keyword index  3 of 3 live chunks" in out
    for action in (["check"], ["drop", "--yes"], ["rebuild"]):
        code, _, err = kb(capsys, "datasets", *action[:1], "nope", *action[1:])
        assert code == 2 and "No such dataset: nope" in err


def test_lost_vectors_are_named_by_check_and_repaired_by_rebuild(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With the vector index emptied, searches find nothing and check exits 1 naming the vector index and
    the repair; rebuild re-embeds the stored chunks (no source files needed), after which check passes
    and the search finds the document again."""
    assert top_document(capsys, "where do cars park") == "parking"
    lose_the_vectors(home)
    shutil.rmtree(home.parent / "docs", ignore_errors=True)  # no source files: rebuild must not need them
    assert top_document(capsys, "where do cars park") is None
    code, out, err = kb(capsys, "datasets", "check", "team")
    assert code == 1
    assert "problem: the vector index lacks 3 of 3 chunks, so searches cannot find them" in out
    assert err.startswith("error: dataset team has 1 problem; `kb datasets rebuild team`")
    code, out, err = kb(capsys, "datasets", "rebuild", "team")
    assert code == 0, err
    assert out.startswith("rebuilt dataset team: 3 documents, 3 chunks re-embedded with use-multilingual-v3")
    code, out, err = kb(capsys, "datasets", "check", "team")
    assert code == 0, out + err
    assert top_document(capsys, "where do cars park") == "parking"
    code, out, _ = kb(
        capsys,
        "search",
        "visitor badge",
        "--dataset",
        "team",
        "--mode",
        "keywords",
        "--threshold",
        "0.01",
        "--json",
    )
    assert code == 0 and json.loads(out)["hits"][0]["document"] == "badges"


def test_a_corrupt_catalog_is_named_by_check_and_rebuild_keeps_what_it_can(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A catalog that lost an entry and overstates another's chunks: check names both disagreements;
    rebuild keeps the document still whole, warns about the one it had to leave out, and checks sound."""
    corrupt_the_catalog(home)
    code, out, _ = kb(capsys, "datasets", "check", "team")
    assert code == 1
    assert "problem: 2 of 4 chunks the catalog lists are missing from the collection (badges)" in out
    assert "problem: the collection holds 1 chunk of no live document version" in out
    code, out, err = kb(capsys, "datasets", "rebuild", "team")
    assert code == 0, err
    assert "warning: left out badges: some of its chunks are no longer stored; ingest it again" in err
    assert out.startswith("rebuilt dataset team: 1 documents, 1 chunks")
    code, out, err = kb(capsys, "datasets", "check", "team")
    assert code == 0, out + err
    code, out, _ = kb(capsys, "docs", "list", "--dataset", "team", "--json")
    assert [doc["name"] for doc in json.loads(out)] == ["lunch"]


def test_drop_asks_first_then_deletes_the_dataset_and_its_keyword_index(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """drop asks on stderr and keeps the dataset unless answered y; --yes drops at once; then the dataset,
    its collections and its keyword folder are gone and list says there is none."""
    monkeypatch.setattr("sys.stdin", io.StringIO("n\n"))
    code, _, err = kb(capsys, "datasets", "drop", "team")
    assert code == 1
    assert err.startswith("drop dataset team (3 documents, 3 chunks)? Its index is deleted; the source files")
    assert "error: dataset team was not dropped (answer y, or pass --yes)" in err
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    code, out, _ = kb(capsys, "datasets", "drop", "team")
    assert code == 0 and out == "dropped dataset team (3 documents, 3 chunks)\n"
    assert not (home / "keywords" / collection_name("team")).exists()
    code, out, _ = kb(capsys, "datasets", "list")
    assert code == 0 and out.startswith("no datasets yet")
    client = chromadb.PersistentClient(path=str(home / "chroma"))
    try:
        assert [collection.name for collection in client.list_collections()] == []
    finally:
        client.close()
    code, _, err = kb(capsys, "datasets", "drop", "team", "--yes")
    assert code == 2 and "No such dataset: team" in err


def test_chroma_internal_errors_become_one_line_naming_check_and_rebuild(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chroma's InternalError during a search or a docs delete exits 1 with one error line naming the
    dataset and both repair commands; list marks the dataset DAMAGED instead of failing."""

    def broken(*_: object, **__: object) -> None:
        raise chromadb.errors.InternalError(
            "Error executing plan: Error sending backfill request to compactor: "
            "Failed to apply logs to the hnsw segment writer"
        )

    monkeypatch.setattr(cd, "vector_hits", broken)
    monkeypatch.setattr(cd, "delete_other_versions", broken)
    monkeypatch.setattr(health, "summarize", broken)
    repair = "Run `kb datasets check team` to see what is wrong and `kb datasets rebuild team` to rebuild it"
    code, out, err = kb(capsys, "search", "parking", "--dataset", "team", "--mode", "embedding")
    assert code == 1 and out == ""
    [line] = err.splitlines()
    assert line.startswith("error: Dataset 'team' is damaged (Chroma: ") and repair in line
    assert "Failed to apply logs to the hnsw segment writer" in line
    code, _, err = kb(capsys, "docs", "delete", "parking", "--dataset", "team")
    assert code == 1 and err.count("\n") == 1 and repair in err
    code, out, _ = kb(capsys, "datasets", "list")
    assert code == 0
    assert "team  DAMAGED: Chroma: " in out and "(kb datasets check team)" in out
