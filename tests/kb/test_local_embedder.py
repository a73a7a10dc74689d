"""The offline USE-multilingual embedder: shape, normalisation, meaning, and work off the event loop."""

from __future__ import annotations

import math

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
        f"第{i}条 公民、法人或者其他组织认为行政行为侵犯其合法权益的,可以申请行政复议。" for i in range(300)
    ]
    async with Ticker() as ticker:
        await embedder.embed_documents(texts)
    assert ticker.ticks >= 10
    assert ticker.max_gap < 0.25
