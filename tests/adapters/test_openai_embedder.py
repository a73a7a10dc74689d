"""OpenAIEmbedder through the real openai client against the scripted aiohttp model server."""

from __future__ import annotations

import json

import pytest

from adapters.embedders.openai_compatible import OpenAIEmbedder
from core.errors import ModelOutputInvalid, ModelUnavailable
from tests import model_fixtures
from tests.model_script import Reply
from tests.model_server import ModelServer, hashed_vector

model_server = model_fixtures.model_server  # the shared fixture, re-exported so pytest finds it here

TEXTS = [f"第{i}条 行政复议申请期限" for i in range(7)]


def make_embedder(server: ModelServer, **options: object) -> OpenAIEmbedder:
    settings: dict[str, object] = {"timeout": 2.0, "retries": 3}
    settings.update(options)
    return OpenAIEmbedder(base_url=server.base_url, model="embed-model", **settings)  # type: ignore[arg-type]


async def test_vectors_come_back_in_input_order_in_batches(model_server: ModelServer) -> None:
    """Seven texts in batches of three make 3 requests; vectors follow input order though the server reverses."""
    model_server.embedding_order = "reversed"
    embedder = make_embedder(model_server, batch_size=3)
    vectors = await embedder.embed_documents(TEXTS)
    assert vectors == [pytest.approx(hashed_vector(text, 32)) for text in TEXTS]
    requests = model_server.embedding_requests
    assert [r.inputs for r in requests] == [TEXTS[0:3], TEXTS[3:6], TEXTS[6:7]]
    assert {(r.body["model"], r.body["encoding_format"]) for r in requests} == {("embed-model", "float")}
    await embedder.aclose()


async def test_query_vector_matches_the_document_vector(model_server: ModelServer) -> None:
    """embed_query returns the same vector as embedding the text as a document."""
    embedder = make_embedder(model_server)
    assert await embedder.embed_query(TEXTS[0]) == (await embedder.embed_documents(TEXTS[:1]))[0]


async def test_dimension_is_discovered_from_the_first_response(model_server: ModelServer) -> None:
    """Without dimension=, the size is unknown until the first call, then learnt from the server."""
    model_server.embedding_dimension = 24
    embedder = make_embedder(model_server)
    with pytest.raises(ModelUnavailable):
        _ = embedder.dimension
    assert await embedder.probe_dimension() == 24
    assert embedder.dimension == 24 and embedder.name == "embed-model"
    assert len(model_server.embedding_requests) == 1


async def test_a_given_dimension_that_does_not_match_is_invalid_output(model_server: ModelServer) -> None:
    """A server returning 32-d vectors for a 16-d model is ModelOutputInvalid."""
    embedder = make_embedder(model_server, dimension=16)
    assert embedder.dimension == 16
    with pytest.raises(ModelOutputInvalid):
        await embedder.embed_documents(TEXTS[:2])


async def test_no_texts_make_no_call(model_server: ModelServer) -> None:
    """An empty input returns [] without contacting the server."""
    assert await make_embedder(model_server).embed_documents([]) == []
    assert model_server.requests == []


async def test_500_then_success_is_retried(model_server: ModelServer) -> None:
    """A 500 on a batch is retried (by the SDK) and the batch then succeeds."""
    model_server.enqueue(Reply.failure(500), endpoint="embeddings")
    vectors = await make_embedder(model_server).embed_documents(TEXTS[:2])
    assert len(vectors) == 2 and len(model_server.embedding_requests) == 2


async def test_429_forever_raises_unavailable_after_the_retries(model_server: ModelServer) -> None:
    """With retries=1, two 429s in a row end in ModelUnavailable after exactly two requests."""
    model_server.enqueue(Reply.failure(429), Reply.failure(429), endpoint="embeddings")
    with pytest.raises(ModelUnavailable):
        await make_embedder(model_server, retries=1).embed_query("期限")
    assert len(model_server.embedding_requests) == 2


async def test_a_missing_vector_is_invalid_output(model_server: ModelServer) -> None:
    """A response with fewer vectors than inputs is ModelOutputInvalid, never a silent misalignment."""
    body = {"object": "list", "model": "m", "data": [{"object": "embedding", "index": 0, "embedding": [1.0]}]}
    model_server.enqueue(Reply(raw_body=json.dumps(body)), endpoint="embeddings")
    with pytest.raises(ModelOutputInvalid):
        await make_embedder(model_server).embed_documents(TEXTS[:2])
