"""Ingestion into the real Chroma knowledge base through its worker processes, and how chunks are stored."""

from __future__ import annotations

import asyncio
import os
from dataclasses import replace
from pathlib import Path

import chromadb
import numpy as np

from adapters.knowledge.chroma.catalog import collection_name
from adapters.knowledge.chroma.workers import WorkerPool
from adapters.knowledge.document_readers import ReadDocument, UnreadableDocument, read_document
from core.knowledge.ingest import ingest
from core.knowledge.ingest_plan import IngestSummary
from core.models import SearchRequest
from tests.kb.kb_support import CountingEmbedder, Ticker, chunks, doc, make_kb

MODEL = "fake-bag"
TOPICS = ["港口码头的装卸规则", "灯塔的维护制度", "船舶进港的申报程序", "集装箱堆场的安全要求"]


def read_with_pid(path: Path) -> ReadDocument:
    """read_document, with the reading process's id appended to the document name."""
    document = read_document(path)
    return replace(document, name=f"{document.name}@{os.getpid()}")


def write_corpus(folder: Path) -> list[Path]:
    folder.mkdir()
    paths = []
    for i, topic in enumerate(TOPICS):
        sections = [f"## 第{s}节\n\n" + f"第{s}节讲述{topic},编号 {i}-{s}。" * 40 for s in range(1, 6)]
        path = folder / f"doc{i}.md"
        path.write_text(f"# {topic}\n\n" + "\n\n".join(sections), encoding="utf-8")
        paths.append(path)
    return paths


async def test_worker_processes_prepare_files_and_give_the_same_index_as_threads(tmp_path: Path) -> None:
    """Files read, chunked and tokenised in worker processes search exactly like files done in threads,
    and the event loop keeps ticking during the whole ingest."""
    paths = write_corpus(tmp_path / "docs")
    embedder = CountingEmbedder(MODEL, 64)
    results: list[tuple[IngestSummary, list[list[tuple[str, float]]]]] = []
    for name, min_bytes in (("workers", 0), ("threads", 10**9)):
        kb = make_kb(tmp_path / name, embedder)
        async with Ticker() as ticker:
            summary = await ingest(
                kb,
                "ds",
                paths,
                read=read_with_pid,
                embedding_model=MODEL,
                unreadable=(UnreadableDocument,),
                worker_min_bytes=min_bytes,
            )
        assert ticker.max_gap < 0.5, name
        pids = {info.name.rsplit("@", 1)[1] for info in await kb.list_documents("ds")}
        assert (str(os.getpid()) not in pids) == (name == "workers"), pids
        found = []
        for mode in ("keywords", "embedding", "blend"):
            request = SearchRequest(query="灯塔维护", datasets=("ds",), mode=mode, limit=20)  # type: ignore[arg-type]
            found.append([(hit.content, round(hit.score, 6)) for hit in await kb.search(request)])
        await kb.close()
        results.append((summary, found))
    (by_workers, found_by_workers), (by_threads, found_by_threads) = results
    assert by_workers.chunks_added == by_threads.chunks_added > len(TOPICS)
    assert found_by_workers == found_by_threads
    assert found_by_workers[0] and "灯塔" in found_by_workers[0][0][0]


async def test_worker_pool_returns_results_from_another_process_and_cleans_up() -> None:
    """A WorkerPool runs a picklable function in a child process; close() removes its result files."""
    pool = WorkerPool(processes=1)
    assert await pool.run(os.getpid) != os.getpid()
    assert pool._directory is not None
    directory = Path(pool._directory)
    assert await asyncio.to_thread(directory.is_dir)
    await pool.close()
    assert not await asyncio.to_thread(directory.exists)
    disabled = WorkerPool(enabled=False)
    assert await disabled.run(os.getpid) == os.getpid()


async def test_chunk_text_is_stored_in_metadata_and_old_document_records_still_read(tmp_path: Path) -> None:
    """New chunks keep their text in metadata (no Chroma document, so no full-text index); a chunk
    written by an earlier version, with its text as the Chroma document, is still returned."""
    embedder = CountingEmbedder(MODEL, 64)
    kb = make_kb(tmp_path, embedder)
    await kb.replace_document(
        "ds", doc("ds", "d1"), chunks("灯塔 管理 制度", "码头 作业 规则"), embedding_model=MODEL
    )
    collection = chromadb.PersistentClient(path=str(tmp_path / "chroma")).get_collection(
        collection_name("ds"), embedding_function=None
    )
    stored = collection.get(include=["documents", "metadatas"])
    assert stored["documents"] == [None, None]
    records = {
        str(meta["text"]): (chunk_id, meta)
        for chunk_id, meta in zip(stored["ids"], stored["metadatas"], strict=True)
    }
    assert sorted(records) == ["灯塔 管理 制度", "码头 作业 规则"]
    old_id, meta = records["码头 作业 规则"]
    collection.upsert(  # the same chunk as an earlier version wrote it: text as the document
        ids=[old_id],
        embeddings=np.asarray([embedder.vector("码头 作业 规则")], dtype=np.float32),
        documents=["码头 作业 规则"],
        metadatas=[{key: value for key, value in meta.items() if key != "text"}],
    )
    for mode in ("embedding", "blend"):
        request = SearchRequest(query="码头作业", datasets=("ds",), mode=mode, limit=5)  # type: ignore[arg-type]
        assert "码头 作业 规则" in [hit.content for hit in await kb.search(request)], mode
    await kb.close()
