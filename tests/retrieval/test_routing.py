"""The tiered routing decision: thresholds, classifier, model vote, fallback, forced modes.

See docs/design.md#routing-tiers.
"""

from __future__ import annotations

import asyncio

import pytest

from core.errors import ModelOutputInvalid, ModelUnavailable
from core.retrieval.complexity import ComplexityFeatures, rule_score
from core.retrieval.routing import (
    RoutingThresholds,
    decide_by_classifier,
    decide_by_rule,
    decide_fallback,
    route,
)
from tests.fakes import FakeEngine

T = RoutingThresholds()
HIGH = ComplexityFeatures(2, 2, 1, 2, 10)  # rule score 0.75
LOW = ComplexityFeatures(1, 0, 1, 0, 10)  # rule score 0.15, one entity
MIDDLE = ComplexityFeatures(2, 0, 1, 0, 10)  # rule score 0.30
LEANING = ComplexityFeatures(2, 1, 1, 0, 10)  # rule score 0.425


class FakeClassifier:
    """A scripted classifier service: a probability, an error, or a delay."""

    def __init__(self, result: float | Exception, *, delay: float = 0.0) -> None:
        self.result = result
        self.delay = delay
        self.calls: list[tuple[str, dict[str, float]]] = []

    async def predict(self, question: str, features: dict[str, float]) -> float:
        self.calls.append((question, features))
        if self.delay:
            await asyncio.sleep(self.delay)
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


@pytest.mark.parametrize(
    ("score", "entities", "expected"),
    [
        (0.75, 3, "multi"),
        (0.7499, 0, None),
        (0.15, 1, "single"),
        (0.15, 2, None),
        (0.1501, 0, None),
        (0.0, 1, "single"),
    ],
)
def test_rule_tier_boundaries(score: float, entities: int, expected: str | None) -> None:
    """Rule >= 0.75 is multi; <= 0.15 with at most one entity is single; anything else is undecided."""
    assert decide_by_rule(score, entities, T) == expected


@pytest.mark.parametrize(
    ("probability", "expected"),
    [(0.8, "multi"), (0.7999, None), (0.2, "single"), (0.2001, None), (0.5, None)],
)
def test_classifier_tier_boundaries(probability: float, expected: str | None) -> None:
    """Classifier >= 0.8 is multi, <= 0.2 is single, in between is uncertain."""
    assert decide_by_classifier(probability, T) == expected


@pytest.mark.parametrize(
    ("score", "probability", "expected"),
    [
        (0.4, None, "multi"),
        (0.3999, None, "single"),
        (0.1, 0.5, "multi"),
        (0.1, 0.4999, "single"),
        (0.3999, 0.4999, "single"),
    ],
)
def test_fallback_boundaries(score: float, probability: float | None, expected: str) -> None:
    """The last resort is multi when rule >= 0.4 or classifier >= 0.5."""
    assert decide_fallback(score, probability, T) == expected


def test_the_fixture_features_sit_on_the_boundaries() -> None:
    """The feature fixtures used below really score 0.75, 0.15, 0.30 and 0.425."""
    assert [rule_score(f) for f in (HIGH, LOW, MIDDLE, LEANING)] == [0.75, 0.15, 0.3, 0.425]


async def test_a_high_rule_score_routes_multi_without_classifier_or_model() -> None:
    """At rule 0.75 the route is multi by rule, and neither the classifier nor the model is asked."""
    engine, classifier = FakeEngine(), FakeClassifier(0.0)
    result = await route("q", HIGH, mode="auto", engine=engine, classifier=classifier)
    assert (result.decision.decision, result.decision.source) == ("multi", "rule")
    assert classifier.calls == [] and engine.history == [] and result.model_calls == 0


async def test_a_low_rule_score_routes_single_by_rule() -> None:
    """At rule 0.15 with one entity the route is single by rule."""
    result = await route("q", LOW, mode="auto", engine=FakeEngine())
    assert (result.decision.decision, result.decision.source) == ("single", "rule")


@pytest.mark.parametrize(("probability", "expected"), [(0.8, "multi"), (0.2, "single")])
async def test_a_confident_classifier_decides(probability: float, expected: str) -> None:
    """A classifier at >= 0.8 or <= 0.2 decides, gets the five features, and no model vote is asked."""
    engine, classifier = FakeEngine(), FakeClassifier(probability)
    result = await route("q", MIDDLE, mode="auto", engine=engine, classifier=classifier)
    decision = result.decision
    assert (decision.decision, decision.source, decision.classifier_probability) == (
        expected,
        "classifier",
        probability,
    )
    assert classifier.calls == [("q", MIDDLE.as_dict())] and engine.calls("vote") == []


async def test_an_uncertain_classifier_hands_over_to_the_model_vote() -> None:
    """A classifier at 0.5 is uncertain, so the model's yes/no vote decides and is recorded."""
    engine = FakeEngine()
    engine.votes.append(True)
    result = await route("q", MIDDLE, mode="auto", engine=engine, classifier=FakeClassifier(0.5))
    decision = result.decision
    assert (decision.decision, decision.source, decision.model_vote) == ("multi", "model", True)
    assert decision.classifier_probability == 0.5 and "uncertain" in decision.reason
    assert result.model_calls == 1 and result.usage.prompt_tokens == 5


async def test_classifier_down_then_model_vote() -> None:
    """An unavailable classifier is skipped and the model vote decides."""
    engine = FakeEngine()
    engine.votes.append(False)
    result = await route(
        "q", MIDDLE, mode="auto", engine=engine, classifier=FakeClassifier(ModelUnavailable("x"))
    )
    assert (result.decision.decision, result.decision.source) == ("single", "model")
    assert "classifier unavailable" in result.decision.reason


async def test_a_slow_classifier_times_out_and_the_model_votes() -> None:
    """A classifier slower than its own timeout counts as unavailable."""
    engine = FakeEngine()
    engine.votes.append(True)
    classifier = FakeClassifier(0.99, delay=1.0)
    result = await route(
        "q", MIDDLE, mode="auto", engine=engine, classifier=classifier, classifier_timeout=0.05
    )
    assert (result.decision.decision, result.decision.source) == ("multi", "model")
    assert "timed out" in result.decision.reason


async def test_classifier_down_and_model_down_fall_back_to_the_rule() -> None:
    """With both remote tiers failing, rule 0.425 >= 0.4 routes multi and 0.30 routes single."""
    engine = FakeEngine()
    engine.votes.extend([ModelUnavailable("down"), ModelOutputInvalid("bad")])
    down = FakeClassifier(ModelUnavailable("down"))
    leaning = await route("q", LEANING, mode="auto", engine=engine, classifier=down)
    middle = await route("q", MIDDLE, mode="auto", engine=engine, classifier=down)
    assert (leaning.decision.decision, leaning.decision.source) == ("multi", "fallback")
    assert (middle.decision.decision, middle.decision.source) == ("single", "fallback")
    assert leaning.model_calls == 1 and leaning.decision.model_vote is None


async def test_fallback_uses_an_uncertain_classifier_probability() -> None:
    """When the model fails, an uncertain classifier at 0.5 still tips the fallback to multi."""
    engine = FakeEngine()
    engine.votes.append(ModelUnavailable("down"))
    result = await route("q", MIDDLE, mode="auto", engine=engine, classifier=FakeClassifier(0.5))
    assert (result.decision.decision, result.decision.source) == ("multi", "fallback")


async def test_without_classifier_the_model_votes() -> None:
    """With no classifier configured the middle band goes straight to the model vote."""
    engine = FakeEngine()
    engine.votes.append(True)
    result = await route("q", MIDDLE, mode="auto", engine=engine)
    assert result.decision.source == "model" and "no classifier configured" in result.decision.reason


@pytest.mark.parametrize("mode", ["single", "multi"])
async def test_retrieval_mode_forces_the_route(mode: str) -> None:
    """retrieval_mode single or multi wins over every tier, and is recorded as forced."""
    engine, classifier = FakeEngine(), FakeClassifier(0.5)
    features = HIGH if mode == "single" else LOW
    result = await route("q", features, mode=mode, engine=engine, classifier=classifier)  # type: ignore[arg-type]
    assert (result.decision.decision, result.decision.source) == (mode, "forced")
    assert classifier.calls == [] and engine.history == []


async def test_the_decision_is_recorded_as_a_dict() -> None:
    """The recorded decision carries source, scores, vote, reason, decision and the features."""
    engine = FakeEngine()
    engine.votes.append(True)
    result = await route("q", MIDDLE, mode="auto", engine=engine, classifier=FakeClassifier(0.6))
    recorded = result.decision.to_json()
    assert {
        k: recorded[k] for k in ("decision", "source", "rule_score", "classifier_probability", "model_vote")
    } == {
        "decision": "multi",
        "source": "model",
        "rule_score": 0.3,
        "classifier_probability": 0.6,
        "model_vote": True,
    }
    assert recorded["reason"] and recorded["features"]["comparison_markers"] == 2
