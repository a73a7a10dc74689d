"""The Chroma knowledge base: datasets, replacement without mixing, disabling, search modes and limits."""

from __future__ import annotations

import asyncio
import logging
import math
import shutil
from collections.abc import Sequence
from pathlib import Path

import chromadb
import numpy as np
import pytest

from adapters.embedders.local import LocalEmbedder
from adapters.knowledge.chroma.catalog import collection_name
from core.errors import InvalidInput, NotFound
from core.models import SearchRequest
from tests.kb.kb_support import CountingEmbedder, KeywordBasisEmbedder, Ticker, chunks, doc, make_kb

MODEL = "fake-bag"


def request(
    query: str, *datasets: str, mode: str = "embedding", limit: int = 10, threshold: float = 0.0
) -> SearchRequest:
    return SearchRequest(query=query, datasets=datasets, mode=mode, limit=limit, threshold=threshold)  # type: ignore[arg-type]


@pytest.fixture
def embedder() -> CountingEmbedder:
    return CountingEmbedder(MODEL, 64)


async def test_dataset_collection_is_cosine_with_ef400_and_records_the_model(
    tmp_path: Path, embedder: CountingEmbedder
) -> None:
    """A dataset's collection uses cosine space, ef_search 400 and records the model and dimension."""
    kb = make_kb(tmp_path, embedder)
    await kb.replace_document(
        "handbook", doc("handbook", "d1"), chunks("vacation policy"), embedding_model=MODEL
    )
    client = chromadb.PersistentClient(path=str(tmp_path / "chroma"))
    collection = client.get_collection(collection_name("handbook"), embedding_function=None)
    assert collection.configuration_json["hnsw"]["space"] == "cosine"
    assert collection.configuration_json["hnsw"]["ef_search"] == 400
    assert collection.metadata["embedding_model"] == MODEL
    assert collection.metadata["dimension"] == 64
    assert await kb.dataset_model("handbook") == MODEL


async def test_chinese_dataset_names_work(tmp_path: Path, embedder: CountingEmbedder) -> None:
    """A dataset named in Chinese gets a valid collection name and is searchable by its name."""
    kb = make_kb(tmp_path, embedder)
    await kb.replace_document(
        "法律库", doc("法律库", "d1"), chunks("行政复议申请期限为六十日"), embedding_model=MODEL
    )
    hits = await kb.search(request("行政复议申请期限", "法律库"))
    assert [h.dataset for h in hits] == ["法律库"]
    assert await kb.list_datasets() == ["法律库"]
    assert collection_name("法律库") != collection_name("法律")


async def test_writing_with_another_embedding_model_is_refused(
    tmp_path: Path, embedder: CountingEmbedder
) -> None:
    """Ingesting into a dataset with a model other than the one it was built with is a clear error."""
    other = CountingEmbedder("other-model", 32)
    kb = make_kb(tmp_path, embedder, other)
    await kb.replace_document("ds", doc("ds", "d1"), chunks("alpha"), embedding_model=MODEL)
    with pytest.raises(InvalidInput) as caught:
        await kb.replace_document("ds", doc("ds", "d2"), chunks("beta"), embedding_model="other-model")
    assert "fake-bag" in caught.value.message("en")
    assert other.document_calls == 0


async def test_changed_document_replaces_its_chunks(tmp_path: Path, embedder: CountingEmbedder) -> None:
    """After a replacement the old text is gone from every mode and the new text is found."""
    kb = make_kb(tmp_path, embedder)
    await kb.replace_document(
        "ds",
        doc("ds", "d1", content_hash="v1"),
        chunks("old walrus text", "old penguin text"),
        embedding_model=MODEL,
    )
    await kb.replace_document(
        "ds", doc("ds", "d1", content_hash="v2"), chunks("new giraffe text"), embedding_model=MODEL
    )
    for mode in ("embedding", "keywords", "blend"):
        contents = [h.content for h in await kb.search(request("walrus penguin giraffe", "ds", mode=mode))]
        assert contents == ["new giraffe text"], mode
    client = chromadb.PersistentClient(path=str(tmp_path / "chroma"))
    assert client.get_collection(collection_name("ds"), embedding_function=None).count() == 1
    [info] = await kb.list_documents("ds")
    assert (info.content_hash, info.chunk_count) == ("v2", 1)


async def test_unchanged_chunks_keep_their_vectors_even_when_written_without_a_hash(
    tmp_path: Path, embedder: CountingEmbedder
) -> None:
    """A new version embeds only its new chunks: kept ones are found by content hash, or, for chunks
    stored before hashes were, by their text, heading and title; the kept vectors are the same."""
    kb = make_kb(tmp_path, embedder)
    first = chunks("walrus text", "penguin text", "giraffe text")
    await kb.replace_document("ds", doc("ds", "d1", content_hash="v1"), first, embedding_model=MODEL)
    collection = chromadb.PersistentClient(path=str(tmp_path / "chroma")).get_collection(
        collection_name("ds"), embedding_function=None
    )
    stored = collection.get(include=["metadatas", "embeddings"])
    legacy = [{k: v for k, v in meta.items() if k != "hash"} for meta in stored["metadatas"]]
    collection.delete(ids=stored["ids"])  # written again as an earlier version wrote them: no hash
    collection.add(ids=stored["ids"], embeddings=stored["embeddings"], metadatas=legacy)
    assert all("hash" not in meta for meta in collection.get(include=["metadatas"])["metadatas"])
    embedder.texts_embedded = 0
    second = chunks("walrus text", "penguin text, changed", "giraffe text")
    [kept] = await kb.replace_documents(
        "ds", [(doc("ds", "d1", content_hash="v2"), second)], embedding_model=MODEL
    )
    assert (kept, embedder.texts_embedded) == (2, 1)
    live = collection.get(where={"version": {"$ne": "x"}}, include=["metadatas", "embeddings"])
    vectors = {
        meta["text"]: vector for meta, vector in zip(live["metadatas"], live["embeddings"], strict=True)
    }
    old = {
        meta["text"]: vector for meta, vector in zip(stored["metadatas"], stored["embeddings"], strict=True)
    }
    assert set(vectors) == {"walrus text", "penguin text, changed", "giraffe text"}
    assert np.allclose(vectors["walrus text"], old["walrus text"])
    assert np.allclose(vectors["giraffe text"], old["giraffe text"])
    embedder.texts_embedded = 0
    await kb.replace_documents("ds", [(doc("ds", "d1", content_hash="v3"), second)], embedding_model=MODEL)
    assert embedder.texts_embedded == 0  # all three now stored with their hash


async def test_chunks_of_a_version_that_is_not_live_are_never_returned(
    tmp_path: Path, embedder: CountingEmbedder
) -> None:
    """Chunks written for a version the catalog has not made live (a replacement in flight) are dropped."""
    kb = make_kb(tmp_path, embedder)
    await kb.replace_document(
        "ds", doc("ds", "d1", content_hash="v1"), chunks("live otter text"), embedding_model=MODEL
    )
    client = chromadb.PersistentClient(path=str(tmp_path / "chroma"))
    collection = client.get_collection(collection_name("ds"), embedding_function=None)
    pending = "pending otter text"
    collection.upsert(
        ids=["d1:pending:0"],
        embeddings=np.asarray([embedder.vector(pending)], dtype=np.float32),
        documents=[pending],
        metadatas=[{"document_id": "d1", "version": "pending", "document_name": "d1", "position": 0}],
    )
    for mode in ("embedding", "blend"):
        assert [h.content for h in await kb.search(request("otter text", "ds", mode=mode))] == [
            "live otter text"
        ]


async def test_searches_during_a_replacement_see_one_version_only(
    tmp_path: Path, embedder: CountingEmbedder
) -> None:
    """Searches running while a document is replaced see the old or the new chunks, never both."""
    kb = make_kb(tmp_path, embedder)
    old = [f"old version paragraph {i} about lighthouses" for i in range(40)]
    new = [f"new version paragraph {i} about lighthouses" for i in range(40)]
    await kb.replace_document("ds", doc("ds", "d1", content_hash="v1"), chunks(*old), embedding_model=MODEL)
    seen: list[set[str]] = []
    done = asyncio.Event()

    async def searcher() -> None:
        while not done.is_set():
            for mode in ("embedding", "keywords"):
                hits = await kb.search(request("version paragraph lighthouses", "ds", mode=mode, limit=50))
                seen.append({h.content.split()[0] for h in hits})

    task = asyncio.create_task(searcher())
    await kb.replace_document("ds", doc("ds", "d1", content_hash="v2"), chunks(*new), embedding_model=MODEL)
    done.set()
    await task
    await kb.search(request("lighthouses", "ds", mode="keywords"))
    assert len(seen) >= 2
    assert all(versions in ({"old"}, {"new"}) for versions in seen), seen


async def test_deleted_document_loses_its_chunks(tmp_path: Path, embedder: CountingEmbedder) -> None:
    """Deleting a document removes its catalog entry and chunks and reports how many."""
    kb = make_kb(tmp_path, embedder)
    await kb.replace_document("ds", doc("ds", "d1"), chunks("kiwi one", "kiwi two"), embedding_model=MODEL)
    await kb.replace_document("ds", doc("ds", "d2"), chunks("mango"), embedding_model=MODEL)
    assert await kb.delete_document("ds", "d1") == 2
    assert [d.document_id for d in await kb.list_documents("ds")] == ["d2"]
    for mode in ("embedding", "keywords", "blend"):
        assert all(h.document_id == "d2" for h in await kb.search(request("kiwi", "ds", mode=mode)))
    with pytest.raises(NotFound):
        await kb.delete_document("ds", "d1")


async def test_disabled_documents_are_hidden_in_every_mode(
    tmp_path: Path, embedder: CountingEmbedder
) -> None:
    """A disabled document never appears in any mode, even with more disabled chunks than the limit."""
    kb = make_kb(tmp_path, embedder)
    hidden = [f"secret salmon note {i}" for i in range(30)]
    await kb.replace_document("ds", doc("ds", "hidden"), chunks(*hidden), embedding_model=MODEL)
    await kb.replace_document("ds", doc("ds", "shown"), chunks("public salmon note"), embedding_model=MODEL)
    await kb.set_enabled("ds", "hidden", False)
    for mode in ("embedding", "keywords", "blend"):
        hits = await kb.search(request("secret salmon note", "ds", mode=mode, limit=5))
        assert [h.document_id for h in hits] == ["shown"], mode
    await kb.set_enabled("ds", "hidden", True)
    hits = await kb.search(request("secret salmon note", "ds", mode="keywords", limit=5))
    assert {h.document_id for h in hits} == {"hidden"}


async def test_embedding_mode_scores_are_one_minus_cosine_distance(
    tmp_path: Path, embedder: CountingEmbedder
) -> None:
    """Embedding scores equal the cosine similarity of the query and chunk vectors, best first."""
    kb = make_kb(tmp_path, embedder)
    texts = ["red apple pie", "green apple tart", "blue whale song"]
    await kb.replace_document("ds", doc("ds", "d1", name="Recipes"), chunks(*texts), embedding_model=MODEL)
    hits = await kb.search(request("apple pie", "ds"))
    query = embedder.vector("apple pie")
    for hit in hits:
        vector = embedder.vector(f"Recipes > Guide\n{hit.content}")
        expected = sum(a * b for a, b in zip(query, vector, strict=True))
        assert math.isclose(hit.score, expected, abs_tol=1e-5)
    assert hits[0].content == "red apple pie"
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert (hits[0].document_name, hits[0].heading, hits[0].source) == ("Recipes", "Guide", "/docs/d1.md")


async def test_keyword_mode_scores_bm25_without_embedding(tmp_path: Path, embedder: CountingEmbedder) -> None:
    """Keyword mode ranks by normalised BM25 in (0, 1), returns only matching chunks and embeds nothing."""
    kb = make_kb(tmp_path, embedder)
    await kb.replace_document(
        "ds",
        doc("ds", "d1"),
        chunks("行政复议申请期限为六十日", "劳动合同的试用期", "天气很好"),
        embedding_model=MODEL,
    )
    hits = await kb.search(request("行政复议期限", "ds", mode="keywords"))
    assert [h.content for h in hits] == ["行政复议申请期限为六十日"]
    assert 0 < hits[0].score < 1
    assert embedder.query_calls == []


async def test_blend_mode_fuses_both_lists(tmp_path: Path) -> None:
    """Blend finds a chunk only the embedding matches and a chunk only the keywords match."""
    semantic = KeywordBasisEmbedder("basis", 8, ["JVM", "Java 虚拟机", "天气"])
    kb = make_kb(tmp_path, semantic)
    texts = ["Java 虚拟机的垃圾回收", "JVM 调优参数手册", "今天天气很好"]
    await kb.replace_document("ds", doc("ds", "d1"), chunks(*texts), embedding_model="basis")
    hits = await kb.search(request("Java 虚拟机 调优参数", "ds", mode="blend"))
    contents = [h.content for h in hits]
    assert set(contents[:2]) == {"Java 虚拟机的垃圾回收", "JVM 调优参数手册"}
    assert all(0 <= h.score <= 1 for h in hits) and hits[0].score > 0.5


async def test_threshold_and_limit_are_clamped(tmp_path: Path, embedder: CountingEmbedder) -> None:
    """Limits clamp to 1..50, negative thresholds act as 0, and a threshold above every score gives []."""
    kb = make_kb(tmp_path, embedder)
    await kb.replace_document(
        "ds", doc("ds", "d1"), chunks(*[f"harbour note number {i}" for i in range(60)]), embedding_model=MODEL
    )
    for mode in ("embedding", "keywords", "blend"):
        assert len(await kb.search(request("harbour note", "ds", mode=mode, limit=500))) == 50
        assert len(await kb.search(request("harbour note", "ds", mode=mode, limit=0))) == 1
        assert len(await kb.search(request("harbour note", "ds", mode=mode, limit=5, threshold=-3))) == 5
        assert await kb.search(request("harbour note", "ds", mode=mode, threshold=1.01)) == []
    scores = [h.score for h in await kb.search(request("harbour note 7", "ds", limit=50, threshold=0.5))]
    assert scores and min(scores) >= 0.5


async def test_bad_requests_are_rejected_and_no_datasets_touches_nothing(
    tmp_path: Path, embedder: CountingEmbedder
) -> None:
    """Blank queries and unknown modes raise InvalidInput; no datasets returns [] without any call."""
    kb = make_kb(tmp_path, embedder)
    await kb.replace_document("ds", doc("ds", "d1"), chunks("text"), embedding_model=MODEL)
    with pytest.raises(InvalidInput):
        await kb.search(request("   ", "ds"))
    with pytest.raises(InvalidInput):
        await kb.search(request("text", "ds", mode="fuzzy"))

    class NoClient:
        def __getattr__(self, name: str) -> object:
            raise AssertionError(f"Chroma was called: {name}")

    counting = CountingEmbedder(MODEL, 64)
    untouched = type(kb)(NoClient(), embedders=lambda model: counting, keyword_home=None)
    assert await untouched.search(request("anything")) == []
    assert counting.query_calls == [] and counting.document_calls == 0


async def test_datasets_of_different_models_are_grouped_and_merged_by_score_then_id(tmp_path: Path) -> None:
    """The query is embedded once per model; hits of both groups merge by score, ties ordered by id."""
    small = KeywordBasisEmbedder("model-small", 8, ["apple", "pear"])
    large = KeywordBasisEmbedder("model-large", 24, ["apple", "pear"])
    kb = make_kb(tmp_path, small, large)
    await kb.replace_document(
        "a1", doc("a1", "zz-doc"), chunks("apple one", "pear one"), embedding_model="model-small"
    )
    await kb.replace_document("a2", doc("a2", "mm-doc"), chunks("apple two"), embedding_model="model-small")
    await kb.replace_document(
        "b1", doc("b1", "aa-doc"), chunks("apple three", "pear three"), embedding_model="model-large"
    )
    hits = await kb.search(request("apple", "a1", "b1", "a2", limit=10))
    assert small.query_calls == ["apple"] and large.query_calls == ["apple"]
    top = [h for h in hits if h.score == 1.0]
    assert [h.id for h in top] == sorted(h.id for h in top)
    assert [h.dataset for h in top] == ["b1", "a2", "a1"]
    assert all(h.score < 1.0 for h in hits[3:])


async def test_searches_run_off_the_event_loop(tmp_path: Path, embedder: CountingEmbedder) -> None:
    """A ticker keeps ticking while searches in every mode, including a BM25 rebuild, run in threads."""
    kb = make_kb(tmp_path, embedder)
    texts = [f"段落 {i} 讲述港口 {i % 17} 号码头的装卸规则和安全要求" for i in range(1500)]
    await kb.replace_document("ds", doc("ds", "big"), chunks(*texts), embedding_model=MODEL)
    async with Ticker() as ticker:
        started = asyncio.get_running_loop().time()
        for mode in ("keywords", "embedding", "blend") * 5:  # the first keyword search rebuilds BM25
            assert await kb.search(request("码头装卸规则", "ds", mode=mode, limit=50))
        elapsed = asyncio.get_running_loop().time() - started
    await kb.close()
    assert ticker.ticks >= elapsed / 0.05
    # A search on the loop would stop the ticker for all of its run; the floor is wide because two test
    # workers and their subprocesses on two cores can leave this process unscheduled for 0.2 s.
    assert ticker.max_gap < max(0.5, elapsed / 2)


async def test_writes_yield_to_the_event_loop_between_batches(
    tmp_path: Path, embedder: CountingEmbedder
) -> None:
    """A large replacement runs in worker threads; the loop runs between write batches (Chroma holds the GIL)."""
    kb = make_kb(tmp_path, embedder, write_batch=50)
    texts = [f"段落 {i} 讲述港口 {i % 17} 号码头的装卸规则和安全要求" for i in range(1500)]
    async with Ticker() as ticker:
        started = asyncio.get_running_loop().time()
        await kb.replace_document("ds", doc("ds", "big"), chunks(*texts), embedding_model=MODEL)
        elapsed = asyncio.get_running_loop().time() - started
    await kb.close()  # stops the worker processes started to tokenise this large batch
    # Done on the loop, the 30 upserts would allow no tick at all and one gap as long as the whole call.
    assert ticker.ticks >= 1500 // 50 // 2
    assert ticker.max_gap < elapsed / 3


class EmbeddingLog(CountingEmbedder):
    """CountingEmbedder that logs when each embedding call starts and ends."""

    def __init__(self, log: list[str]) -> None:
        super().__init__()
        self.log = log

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.log.append("embed starts")
        vectors = await super().embed_documents(texts)
        await asyncio.sleep(0.05)  # an embedder in another process: the loop goes on meanwhile
        self.log.append("embedded")
        return vectors


async def test_the_next_batch_is_embedded_while_this_one_is_written(tmp_path: Path) -> None:
    """Each write batch's embedding is asked for before the previous batch is written, so an embedder in a
    process of its own works while Chroma writes; vectors and order are those of one batch at a time."""
    log: list[str] = []
    embedder = EmbeddingLog(log)
    kb = make_kb(tmp_path, embedder, write_batch=50)
    texts = [f"段落 {i} 讲述港口 {i % 17} 号码头的装卸规则" for i in range(120)]
    await kb.replace_documents(
        "ds",
        [(doc("ds", "big"), chunks(*texts))],
        embedding_model=MODEL,
        on_written=lambda count: log.append(f"wrote {count}"),
    )
    hits = await kb.search(request(texts[101], "ds", mode="embedding", limit=1))
    await kb.close()
    starts = [i for i, entry in enumerate(log) if entry.startswith("embed ")]
    writes = [i for i, entry in enumerate(log) if entry.startswith("wrote")]
    assert [log[i] for i in writes] == ["wrote 50", "wrote 50", "wrote 20"]
    assert len(starts) == 3
    assert starts[1] < writes[0] and starts[2] < writes[1]  # asked for before the batch ahead was written
    assert [h.content for h in hits] == [texts[101]]


async def test_keyword_index_survives_a_restart_and_is_rebuilt_when_missing(
    tmp_path: Path, embedder: CountingEmbedder
) -> None:
    """A new process loads the saved keyword index; with the folder gone it rebuilds it from Chroma."""
    kb = make_kb(tmp_path, embedder)
    await kb.replace_document(
        "ds", doc("ds", "d1"), chunks("灯塔 管理 制度", "码头 作业"), embedding_model=MODEL
    )
    await kb.close()
    reopened = make_kb(tmp_path, embedder)
    assert [h.content for h in await reopened.search(request("灯塔", "ds", mode="keywords"))] == [
        "灯塔 管理 制度"
    ]
    elsewhere = type(kb)(
        chromadb.PersistentClient(path=str(tmp_path / "chroma")),
        embedders=lambda model: embedder,
        keyword_home=tmp_path / "empty-keywords",
    )
    assert [h.content for h in await elsewhere.search(request("码头", "ds", mode="keywords"))] == [
        "码头 作业"
    ]


async def test_warm_up_rebuilds_a_lost_keyword_index_and_saves_it(
    tmp_path: Path, embedder: CountingEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    """warm_up() (kb serve's start) re-tokenises a dataset whose keyword folder is gone and saves it.

    600 chunks: the repair is split between the worker processes; results match the original index,
    and the next process loads the saved index instead of repairing again.
    """
    kb = make_kb(tmp_path, embedder)
    for number in range(20):
        texts = [f"港口{number}号泊位 第{i}段 集装箱 吞吐量 {number * 30 + i}" for i in range(30)]
        await kb.replace_document("ds", doc("ds", f"d{number}"), chunks(*texts), embedding_model=MODEL)
    query = request("港口7号泊位 集装箱", "ds", mode="keywords", limit=5)
    before = [(h.id, round(h.score, 6)) for h in await kb.search(query)]
    await kb.close()
    folder = tmp_path / "keywords" / collection_name("ds")
    shutil.rmtree(folder)

    caplog.set_level(logging.INFO, logger="adapters.knowledge.chroma.store")
    repaired = make_kb(tmp_path, embedder)
    assert await repaired.warm_up() == ["ds"]
    assert "tokenising 600 chunks read back from Chroma" in caplog.text
    assert (folder / "manifest.json").exists()
    assert [(h.id, round(h.score, 6)) for h in await repaired.search(query)] == before
    await repaired.close()

    caplog.clear()
    again = make_kb(tmp_path, embedder)
    assert [(h.id, round(h.score, 6)) for h in await again.search(query)] == before
    assert "read back from Chroma" not in caplog.text
    await again.close()


async def test_jvm_finds_java_virtual_machine_with_the_offline_embedder(tmp_path: Path) -> None:
    """No literal-match filter: 'JVM' finds a paragraph that only says 'Java 虚拟机' (embedding and blend)."""
    local = LocalEmbedder()
    kb = make_kb(tmp_path, local)
    texts = [
        "Java 虚拟机通过垃圾回收自动管理堆内存,常见的收集器有 G1 和 ZGC。",
        "红烧肉的家常做法:五花肉切块,冰糖炒色后小火慢炖。",
        "今天北京的天气很好,适合去公园散步。",
        "公司年假制度:入职满一年可享受五天带薪年假。",
    ]
    await kb.replace_document(
        "tech", doc("tech", "d1", name="笔记"), chunks(*texts, heading=("杂记",)), embedding_model=local.name
    )
    for mode in ("embedding", "blend"):
        hits = await kb.search(request("JVM", "tech", mode=mode, limit=20, threshold=0.25))
        assert hits and hits[0].content == texts[0], mode
    assert await kb.search(request("JVM", "tech", mode="keywords")) == []


@pytest.mark.parametrize("mode", ["embedding", "keywords", "blend"])
async def test_a_file_kept_in_two_folders_is_one_result_and_leaves_room_for_the_next(
    tmp_path: Path, embedder: CountingEmbedder, mode: str
) -> None:
    """Two copies of one passage (same document name, heading and text) give one hit; the limit is filled
    with the next passage, and equal text under another document is still its own hit."""
    kb = make_kb(tmp_path, embedder)
    texts = ("职业病诊断争议可以申请劳动仲裁", "劳动仲裁的时效期间为一年", "仲裁委员会的组成")
    for folder in ("社会法", "经济法"):
        await kb.replace_document(
            "ds",
            doc("ds", f"{folder}/职业病防治法", name="职业病防治法"),
            chunks(*texts),
            embedding_model=MODEL,
        )
    await kb.replace_document(
        "ds",
        doc("ds", "劳动法", name="劳动法"),
        chunks("职业病诊断争议可以申请劳动仲裁"),
        embedding_model=MODEL,
    )
    hits = await kb.search(request("职业病诊断 劳动仲裁", "ds", mode=mode, limit=3))
    passages = [(h.document_name, h.content) for h in hits]
    assert len(passages) == len(set(passages)) == 3
    assert ("职业病防治法", "职业病诊断争议可以申请劳动仲裁") in passages
    assert ("劳动法", "职业病诊断争议可以申请劳动仲裁") in passages
