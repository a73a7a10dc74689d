"""The offline USE-multilingual embedder: shape, normalisation, meaning, and work off the event loop."""

from __future__ import annotations

import contextlib
import math
import time

from adapters.embedders.local import LOCAL_MODEL_NAME, LocalEmbedder
from tests.kb.kb_support import Ticker


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


async def test_vectors_are_512_dimensional_unit_length_and_deterministic() -> None:
    """Every vector has 512 finite components, unit length, and the same text gives the same vector."""
    embedder = LocalEmbedder()
    assert (embedder.name, embedder.dimension) == (LOCAL_MODEL_NAME, 512)
    vectors = await embedder.embed_documents(["第一段文字", "second paragraph", ""])
    assert len(vectors) == 3
    for vector in vectors:
        assert len(vector) == 512
        assert math.isclose(math.sqrt(sum(v * v for v in vector)), 1.0, abs_tol=1e-4) or not any(vector)
    query = await embedder.embed_query("第一段文字")
    assert math.isclose(cosine(query, vectors[0]), 1.0, abs_tol=1e-5)
    assert await embedder.embed_documents([]) == []


async def test_paraphrases_are_closer_than_unrelated_text_across_languages() -> None:
    """Synonyms and translations (JVM / Java 虚拟机) score higher than unrelated sentences."""
    embedder = LocalEmbedder()
    jvm = await embedder.embed_query("JVM")
    java_vm, weather, english = await embedder.embed_documents(
        ["Java 虚拟机的垃圾回收机制", "今天北京的天气很好,适合去公园散步", "JVM garbage collection"]
    )
    assert cosine(jvm, java_vm) > cosine(jvm, weather) + 0.1
    assert cosine(jvm, english) > cosine(jvm, weather) + 0.1


async def test_embedding_runs_off_the_event_loop() -> None:
    """A ticker keeps ticking while a few hundred texts are embedded in a worker thread."""
    embedder = LocalEmbedder()
    await embedder.embed_query("warm up")
    texts = [
        f"第{i}条 公民、法人或者其他组织认为行政行为侵犯其合法权益的,可以申请行政复议。" for i in range(1000)
    ]
    async with Ticker() as ticker:
        started = time.perf_counter()
        await embedder.embed_documents(texts)
        elapsed = time.perf_counter() - started
    assert ticker.ticks >= 10
    # on the loop the ticker would stop for the whole call (about a second here); the relative bound leaves
    # room for this process going unscheduled while other test workers hold both cores
    assert ticker.max_gap < max(0.25, elapsed / 3)


async def test_documents_embedded_with_more_threads_match_and_queries_go_back_to_one() -> None:
    """KB_EMBED_THREADS: an ingest's embedder (document_threads=2) gives the same vectors as one thread,
    and the shared model is back at one BLAS thread afterwards, for the next query."""
    from adapters.embedders import local

    texts = ["劳动合同的试用期最长不得超过六个月", "The printer on floor 2 is the HP 4410."] * 40
    single = await LocalEmbedder().embed_documents(texts)
    threaded = await LocalEmbedder(document_threads=2).embed_documents(texts)
    assert all(math.isclose(cosine(a, b), 1.0, abs_tol=1e-5) for a, b in zip(single, threaded, strict=True))
    model = local._load_model()
    assert (model.threads, model._model.threads) == (1, 1)


def test_kb_embed_threads_defaults_to_all_cores_but_one() -> None:
    """0 (the default) means all cores but one, at least one; a number is taken as given."""
    import os

    from bot.settings import Settings

    assert Settings().embedding.document_threads == max(1, (os.cpu_count() or 1) - 1)
    assert Settings(embedding={"threads": 3}).embedding.document_threads == 3


async def test_documents_embedded_in_their_own_process_match_and_the_process_stops() -> None:
    """The ingesting commands' embedder (own_process) gives the vectors of one in this process, from a process
    of its own that aclose() stops; queries stay in this process."""
    import multiprocessing

    texts = ["劳动合同的试用期最长不得超过六个月", "The printer on floor 2 is the HP 4410."] * 20
    expected = await LocalEmbedder().embed_documents(texts)
    embedder = LocalEmbedder(own_process=True)
    try:
        got = await embedder.embed_documents(texts)
        assert "kb-embedding" in [p.name for p in multiprocessing.active_children()]
        assert await embedder.embed_documents([]) == []
        query = await embedder.embed_query(texts[0])
    finally:
        await embedder.aclose()
    assert "kb-embedding" not in [p.name for p in multiprocessing.active_children()]
    for a, b in zip(got, expected, strict=True):
        assert max(abs(x - y) for x, y in zip(a, b, strict=True)) < 1e-5
    assert math.isclose(cosine(query, got[0]), 1.0, abs_tol=1e-5)


async def test_an_embedding_given_up_half_way_does_not_answer_the_next_one() -> None:
    """Cancelled while its process embeds (an ingest that fails mid-batch), a request leaves no answer behind
    to be read as the next one's: that process is stopped and the next request gets its own vectors from a
    new one (two threads reading one pipe could split a message between them)."""
    import asyncio
    import multiprocessing

    def embedding_processes() -> list[int | None]:
        return [p.pid for p in multiprocessing.active_children() if p.name == "kb-embedding"]

    texts = [
        f"第{i}条 公民、法人或者其他组织认为行政行为侵犯其合法权益的,可以申请行政复议。" for i in range(400)
    ]
    other = ["The printer on floor 2 is the HP 4410.", "年假最多可以休几天"]
    expected = await LocalEmbedder().embed_documents(other)
    embedder = LocalEmbedder(own_process=True)
    try:
        await embedder.embed_documents(["warm up"])
        first = embedding_processes()
        pending = asyncio.ensure_future(embedder.embed_documents(texts))
        await asyncio.sleep(0.05)
        pending.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pending
        got = await embedder.embed_documents(other)
        second = embedding_processes()
    finally:
        await embedder.aclose()
    assert len(first) == len(second) == 1 and first != second
    for a, b in zip(got, expected, strict=True):
        assert max(abs(x - y) for x, y in zip(a, b, strict=True)) < 1e-5
