"""The bot's router and HTTP client against the real classifier service, and the client's memory of a failure."""

from __future__ import annotations

import socket
import time
from pathlib import Path

from adapters.models.classifier_client import HttpComplexityClassifier
from core.retrieval.complexity import extract_features, rule_score
from core.retrieval.routing import RoutingThresholds, route
from tests.classifier.support import running_service
from tests.fakes import FakeEngine
from tests.retrieval.servers import scripted_server

T = RoutingThresholds()
MIDDLE_MULTI = "Which was founded earlier, Stanford University or the World Bank?"  # rule score 0.355
MIDDLE_SINGLE = "国家统计局位于重庆的哪个区？"  # rule score 0.315: the rules lean multi, it is one lookup


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_the_router_takes_the_services_confident_answer_in_the_middle_band(
    tiny_model: tuple[Path, Path],
) -> None:
    """Undecided by rules, both questions are decided by the real service's probability; no model vote is asked."""
    async with running_service(tiny_model[1]) as service:
        client = HttpComplexityClassifier(service.base_url)
        engine = FakeEngine()
        results = {}
        for question in (MIDDLE_MULTI, MIDDLE_SINGLE):
            features = extract_features(question)
            assert T.rule_single < rule_score(features) < T.rule_multi
            results[question] = await route(question, features, mode="auto", engine=engine, classifier=client)
            _, direct = await service.call(
                "POST", "/predict", {"question": question, "features": features.as_dict()}
            )
            assert results[question].decision.classifier_probability == direct["multi_hop_probability"]
        await client.aclose()
    multi, single = results[MIDDLE_MULTI].decision, results[MIDDLE_SINGLE].decision
    assert (multi.decision, multi.source) == ("multi", "classifier")
    assert (single.decision, single.source) == ("single", "classifier")
    assert engine.calls("vote") == []


async def test_a_service_without_a_model_hands_over_to_the_model_vote(tmp_path: Path) -> None:
    """The real service answering 503 (no model) makes the router fall back to the model vote, not fail."""
    async with running_service(tmp_path / "none") as service:
        client = HttpComplexityClassifier(service.base_url)
        engine = FakeEngine()
        engine.votes.append(True)
        features = extract_features(MIDDLE_MULTI)
        result = await route(MIDDLE_MULTI, features, mode="auto", engine=engine, classifier=client)
        await client.aclose()
    assert (result.decision.decision, result.decision.source) == ("multi", "model")
    assert (
        "classifier unavailable" in result.decision.reason and result.decision.classifier_probability is None
    )


async def test_a_down_service_is_not_asked_again_until_retry_after_has_passed() -> None:
    """After a refused connection the next questions skip the service at once; after retry_after it is tried again."""
    clock = FakeClock()
    client = HttpComplexityClassifier(f"http://127.0.0.1:{_closed_port()}", retry_after=30.0, clock=clock)
    features = extract_features(MIDDLE_MULTI)
    engine = FakeEngine()
    first = await route(MIDDLE_MULTI, features, mode="auto", engine=engine, classifier=client)
    second = await route(MIDDLE_MULTI, features, mode="auto", engine=engine, classifier=client)
    assert client.requests_sent == 1
    assert (
        "classifier unavailable" in first.decision.reason
        and "classifier unavailable" in second.decision.reason
    )
    clock.now += 31.0
    await route(MIDDLE_MULTI, features, mode="auto", engine=engine, classifier=client)
    assert client.requests_sent == 2
    await client.aclose()


async def test_a_hanging_service_costs_the_timeout_once_not_on_every_question() -> None:
    """A service slower than the timeout costs the first question the timeout; the next ones go on at once."""
    async with scripted_server() as server:
        server.reply("/predict", {"multi_hop_probability": 0.9}, delay=1.0)
        client = HttpComplexityClassifier(server.base_url, timeout=0.3)
        features = extract_features(MIDDLE_MULTI)
        timings = []
        for _ in range(3):
            started = time.perf_counter()
            result = await route(
                MIDDLE_MULTI,
                features,
                mode="auto",
                engine=FakeEngine(),
                classifier=client,
                classifier_timeout=0.3,
            )
            timings.append(time.perf_counter() - started)
            assert result.decision.source == "model"
        await client.aclose()
    assert timings[0] >= 0.25 and max(timings[1:]) < 0.1
    assert len(server.requests) == 1


async def test_a_refused_request_is_not_remembered_and_a_ready_health_clears_the_memory() -> None:
    """A 400 says nothing about the service (the next call is sent); /health ready ends a remembered failure."""
    async with scripted_server() as server:
        server.reply("/predict", {"error": "invalid_request"}, status=400)
        client = HttpComplexityClassifier(server.base_url, retry_after=300.0)
        for _ in range(2):
            result = await route(
                MIDDLE_MULTI, extract_features(MIDDLE_MULTI), mode="auto", engine=None, classifier=client
            )
            assert result.decision.source == "fallback"
        assert len(server.requests) == 2
        server.reply("/predict", {"error": "model_not_ready"}, status=503)
        await route(MIDDLE_MULTI, extract_features(MIDDLE_MULTI), mode="auto", engine=None, classifier=client)
        server.reply("/predict", {"multi_hop_probability": 0.93})
        skipped = await route(
            MIDDLE_MULTI, extract_features(MIDDLE_MULTI), mode="auto", engine=None, classifier=client
        )
        assert skipped.decision.source == "fallback" and len(server.requests) == 3  # the 503 is remembered
        server.reply("/health", {"ready": True, "model_version": "v2"})
        assert (await client.health())["ready"] is True
        back = await route(
            MIDDLE_MULTI, extract_features(MIDDLE_MULTI), mode="auto", engine=None, classifier=client
        )
        await client.aclose()
    assert (back.decision.source, back.decision.classifier_probability) == ("classifier", 0.93)


async def test_the_client_reuses_one_connection_across_questions(tiny_model: tuple[Path, Path]) -> None:
    """Consecutive predictions go over one keep-alive session, which aclose() closes."""
    async with running_service(tiny_model[1]) as service:
        client = HttpComplexityClassifier(service.base_url)
        await client.predict(MIDDLE_SINGLE, extract_features(MIDDLE_SINGLE).as_dict())
        session = client._session
        await client.predict(MIDDLE_MULTI, extract_features(MIDDLE_MULTI).as_dict())
        assert client._session is session and session is not None and not session.closed
        await client.aclose()
    assert session.closed
