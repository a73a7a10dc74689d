"""HttpReranker and HttpComplexityClassifier against real local aiohttp servers."""

from __future__ import annotations

import socket

import pytest

from adapters.models.classifier_client import HttpComplexityClassifier
from adapters.models.http_reranker import HttpReranker
from core.errors import ModelOutputInvalid, ModelUnavailable
from core.retrieval.iterative import IterativeRetriever
from tests.fakes import FakeEngine, FakeKnowledgeBase
from tests.retrieval.servers import scripted_server
from tests.retrieval.support import Recorder, hit

HITS = [hit("a", "first"), hit("b", "second"), hit("c", "third")]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_tei_style_rerank_sends_texts_and_reads_index_score_pairs() -> None:
    """Without a model the request is TEI-shaped and [{index, score}] orders the hits."""
    async with scripted_server() as server:
        server.reply(
            "/rerank", [{"index": 2, "score": 0.9}, {"index": 0, "score": 0.4}, {"index": 1, "score": 0.1}]
        )
        ranked = await HttpReranker(server.base_url).rerank("question", HITS)
    assert [(h.id, h.score) for h in ranked] == [("c", 0.9), ("a", 0.4), ("b", 0.1)]
    method, path, body = server.requests[0]
    assert (method, path) == ("POST", "/rerank")
    assert body["query"] == "question" and body["texts"] == ["doc\nfirst", "doc\nsecond", "doc\nthird"]


async def test_cohere_style_rerank_sends_model_and_documents_and_reads_results() -> None:
    """With a model the request is Jina/Cohere-shaped with top_n, the key is sent, and results[] is read."""
    async with scripted_server() as server:
        server.reply(
            "/v1/rerank",
            {"results": [{"index": 1, "relevance_score": 0.7}, {"index": 0, "relevance_score": 0.2}]},
        )
        reranker = HttpReranker(server.base_url + "/v1/", model="bge-reranker", api_key="k")
        ranked = await reranker.rerank("question", HITS)
    assert [h.id for h in ranked] == ["b", "a", "c"]
    body = server.requests[0][2]
    assert body["model"] == "bge-reranker" and body["top_n"] == 3 and len(body["documents"]) == 3
    assert reranker.name == "http:bge-reranker"


@pytest.mark.parametrize(
    ("status", "payload", "error"),
    [
        (503, {"error": "overloaded"}, ModelUnavailable),
        (200, {"unexpected": True}, ModelOutputInvalid),
        (200, [{"index": 7, "score": 0.5}], ModelOutputInvalid),
        (200, "not json", ModelOutputInvalid),
    ],
)
async def test_rerank_failures_map_to_core_errors(
    status: int, payload: object, error: type[Exception]
) -> None:
    """HTTP errors become ModelUnavailable; malformed bodies and bad indexes become ModelOutputInvalid."""
    async with scripted_server() as server:
        server.reply("/rerank", payload, status=status)
        with pytest.raises(error):
            await HttpReranker(server.base_url).rerank("q", HITS)


async def test_rerank_timeout_and_refused_connection_are_unavailable() -> None:
    """A slow service and a closed port both raise ModelUnavailable."""
    async with scripted_server() as server:
        server.reply("/rerank", [], delay=1.0)
        with pytest.raises(ModelUnavailable):
            await HttpReranker(server.base_url, timeout=0.1).rerank("q", HITS)
    with pytest.raises(ModelUnavailable):
        await HttpReranker(f"http://127.0.0.1:{_closed_port()}").rerank("q", HITS)


async def test_the_retriever_falls_back_to_local_rerank_when_the_http_service_fails() -> None:
    """A rerank service answering 500 does not fail the question; the trace records the fallback."""
    kb = FakeKnowledgeBase()
    kb.script("行政复议的申请期限是多久", [hit("p1", score=0.8)])
    async with scripted_server() as server:
        server.reply("/rerank", {"error": "boom"}, status=500)
        retriever = IterativeRetriever(kb=kb, engine=FakeEngine(), reranker=HttpReranker(server.base_url))
        outcome = await retriever.retrieve(
            "行政复议的申请期限是多久",
            datasets=["ds"],
            search_mode="blend",
            retrieval_mode="single",
            emit=Recorder(),
        )
    assert [h.id for h in outcome.hits] == ["p1"]
    rerank = outcome.trace.rerank
    assert rerank is not None and rerank.method == "local" and rerank.fallback_from == "http"


async def test_classifier_predict_posts_question_and_features() -> None:
    """POST /predict carries the question and features; the probability comes back as a float."""
    async with scripted_server() as server:
        server.reply(
            "/predict",
            {"label": "multi", "multi_hop_probability": 0.91, "model_version": "v1", "features": {}},
        )
        probability = await HttpComplexityClassifier(server.base_url).predict("q", {"entities": 2.0})
    assert probability == 0.91
    assert server.requests == [("POST", "/predict", {"question": "q", "features": {"entities": 2.0}})]


async def test_classifier_health_returns_the_body() -> None:
    """GET /health returns the service's status object."""
    async with scripted_server() as server:
        server.reply("/health", {"status": "ok", "model_version": "v1"})
        assert await HttpComplexityClassifier(server.base_url).health() == {
            "status": "ok",
            "model_version": "v1",
        }


@pytest.mark.parametrize(
    ("status", "payload", "delay"),
    [
        (503, {"error": "loading"}, 0.0),
        (200, {"label": "multi"}, 0.0),
        (200, {"multi_hop_probability": 1.5}, 0.0),
        (200, {"multi_hop_probability": 0.5}, 1.0),
    ],
)
async def test_classifier_failures_are_model_unavailable(status: int, payload: object, delay: float) -> None:
    """HTTP errors, a missing or out-of-range probability and a timeout all raise ModelUnavailable."""
    async with scripted_server() as server:
        server.reply("/predict", payload, status=status, delay=delay)
        with pytest.raises(ModelUnavailable):
            await HttpComplexityClassifier(server.base_url, timeout=0.2).predict("q", {})


async def test_classifier_unreachable_is_model_unavailable() -> None:
    """A refused connection raises ModelUnavailable, for /predict and /health."""
    classifier = HttpComplexityClassifier(f"http://127.0.0.1:{_closed_port()}")
    with pytest.raises(ModelUnavailable):
        await classifier.predict("q", {})
    with pytest.raises(ModelUnavailable):
        await classifier.health()
