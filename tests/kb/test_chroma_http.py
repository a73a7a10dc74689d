"""Server mode: the knowledge base over a real `chroma run` subprocess through HttpClient."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from adapters.knowledge.chroma.kb import ChromaKnowledgeBase
from adapters.knowledge.factory import make_chroma_client
from core.models import SearchRequest
from tests.kb.kb_support import CountingEmbedder, chunks, doc

MODEL = "fake-bag"


def _kb(url: str, home: Path, embedder: CountingEmbedder, ttl: float | None = 0.0) -> ChromaKnowledgeBase:
    client = make_chroma_client(chroma_path=home, chroma_url=url)
    return ChromaKnowledgeBase(
        client, embedders=lambda model: embedder, keyword_home=home / "keywords", catalog_ttl=ttl
    )


async def test_server_mode_searches_every_mode_and_shares_state_between_clients(
    chroma_url: str, tmp_path: Path
) -> None:
    """Through `chroma run`, writes from one client are searchable (and disabling is seen) from another."""
    embedder = CountingEmbedder(MODEL, 32)
    writer = _kb(chroma_url, tmp_path / "machine-a", embedder)
    await writer.replace_document(
        "法规", doc("法规", "d1"), chunks("行政复议申请期限为六十日", "劳动合同试用期"), embedding_model=MODEL
    )
    await writer.replace_document(
        "法规", doc("法规", "d2"), chunks("行政诉讼起诉期限为十五日"), embedding_model=MODEL
    )
    await writer.close()

    reader = _kb(chroma_url, tmp_path / "machine-b", embedder)  # no keyword index on this machine yet
    for mode in ("embedding", "keywords", "blend"):
        hits = await reader.search(SearchRequest("行政复议申请期限", ("法规",), mode=mode, limit=3))
        assert hits and hits[0].content == "行政复议申请期限为六十日", mode
    await writer.set_enabled("法规", "d1", False)
    hits = await reader.search(SearchRequest("行政复议申请期限", ("法规",), mode="blend", limit=5))
    assert [h.document_id for h in hits] == ["d2"]
    assert [d.document_id for d in await reader.list_documents("法规")] == ["d1", "d2"]


async def test_writers_through_a_chroma_server_share_one_postgres_advisory_lock_per_dataset(
    chroma_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With KB_CHROMA_URL and a PostgreSQL KB_DATABASE_URL the writer lock is PostgreSQL's: while another
    machine holds the dataset, `kb ingest --no-wait` fails naming it; then ingest, check and rebuild
    (its collection swap over HTTP) work through the server."""
    from adapters.knowledge.factory import writer_locks
    from adapters.knowledge.locks.advisory_lock import PostgresWriterLocks
    from bot.cli import main
    from bot.settings import Settings
    from tests.adapters.postgres_support import POSTGRES_URL, require_postgres

    await require_postgres()
    dataset = f"laws-{uuid.uuid4().hex[:8]}"  # advisory locks are database-wide
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "review.md").write_text("# Review\n\nAn application for review is filed within sixty days.\n")
    monkeypatch.setenv("KB_CHROMA_URL", chroma_url)
    monkeypatch.setenv("KB_DATABASE_URL", POSTGRES_URL)
    assert isinstance(writer_locks(Settings(), command="kb"), PostgresWriterLocks)

    def run(*argv: str) -> tuple[int, str, str]:
        code = main(list(argv))
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    other_machine = PostgresWriterLocks(POSTGRES_URL, command=f"kb ingest elsewhere --dataset {dataset}")
    async with other_machine.hold(dataset):
        code, _, err = await asyncio.to_thread(run, "ingest", str(folder), "--dataset", dataset, "--no-wait")
        assert code == 1 and f"`kb ingest elsewhere --dataset {dataset}`" in err and err.startswith("error: ")
    code, out, err = await asyncio.to_thread(run, "ingest", str(folder), "--dataset", dataset, "--no-wait")
    assert code == 0, err
    for argv in (
        ("datasets", "check", dataset),
        ("datasets", "rebuild", dataset),
        ("datasets", "check", dataset),
    ):
        code, out, err = await asyncio.to_thread(run, *argv)
        assert code == 0, out + err
    assert "vector index   1 of 1 live chunks" in out
