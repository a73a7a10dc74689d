"""Single-hop or multi-hop: the tiered routing decision (rules, classifier, model vote, fallback).

Tiers, in order (thresholds in :class:`RoutingThresholds`; see docs/design.md#routing-tiers):

1. ``retrieval_mode`` "single" or "multi" forces the route (source "forced").
2. Rule score >= 0.75 -> multi; rule score <= 0.15 with at most one entity -> single (source "rule").
3. The classifier service, when configured: probability >= 0.8 -> multi, <= 0.2 -> single
   (source "classifier"); in between, or when it fails or times out, go on.
4. A yes/no vote from the engine's ``vote_multihop`` (source "model").
5. If the vote fails too: rule >= 0.4 or classifier >= 0.5 -> multi, else single (source "fallback").

The decisions are pure functions; :func:`route` only adds the two remote calls around them. The result is
a :class:`core.trace.RouteDecision`, which the trace records.
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass, field

from core.errors import KbError
from core.models import RetrievalMode, Usage
from core.ports import ComplexityClassifier, Engine
from core.retrieval.complexity import ComplexityFeatures, rule_score
from core.trace import Route, RouteDecision


@dataclass(frozen=True, slots=True)
class RoutingThresholds:
    """The thresholds of each tier (docs/design.md#routing-tiers)."""

    rule_multi: float = 0.75
    rule_single: float = 0.15
    single_max_entities: int = 1
    classifier_multi: float = 0.8
    classifier_single: float = 0.2
    fallback_rule: float = 0.4
    fallback_classifier: float = 0.5


def decide_by_rule(score: float, entities: int, thresholds: RoutingThresholds) -> Route | None:
    """Tier 2: multi at >= rule_multi, single at <= rule_single with few entities, else undecided."""
    if score >= thresholds.rule_multi:
        return "multi"
    if score <= thresholds.rule_single and entities <= thresholds.single_max_entities:
        return "single"
    return None


def decide_by_classifier(probability: float, thresholds: RoutingThresholds) -> Route | None:
    """Tier 3: multi at >= classifier_multi, single at <= classifier_single, else uncertain."""
    if probability >= thresholds.classifier_multi:
        return "multi"
    if probability <= thresholds.classifier_single:
        return "single"
    return None


def decide_fallback(score: float, probability: float | None, thresholds: RoutingThresholds) -> Route:
    """Tier 5: multi when the rule score or the classifier probability leans multi, else single."""
    if score >= thresholds.fallback_rule:
        return "multi"
    if probability is not None and probability >= thresholds.fallback_classifier:
        return "multi"
    return "single"


@dataclass(frozen=True, slots=True)
class RoutingResult:
    """A decision plus what it cost (the vote is a model call)."""

    decision: RouteDecision
    usage: Usage = field(default_factory=Usage)
    model_calls: int = 0


async def _classify(
    classifier: ComplexityClassifier, question: str, features: ComplexityFeatures, limit: float
) -> tuple[float | None, str]:
    """The classifier's probability, or None with the reason it could not be used."""
    try:
        async with asyncio.timeout(limit):
            probability = await classifier.predict(question, features.as_dict())
    except TimeoutError:
        return None, f"classifier timed out after {limit:g}s"
    except KbError as exc:
        return None, f"classifier unavailable ({exc.code})"
    if isinstance(probability, bool) or not isinstance(probability, int | float):
        return None, "classifier returned no probability"
    if math.isnan(probability) or not 0.0 <= probability <= 1.0:
        return None, "classifier probability out of range"
    return float(probability), ""


async def route(
    question: str,
    features: ComplexityFeatures,
    *,
    mode: RetrievalMode,
    engine: Engine | None,
    classifier: ComplexityClassifier | None = None,
    thresholds: RoutingThresholds = RoutingThresholds(),
    classifier_timeout: float = 2.0,
) -> RoutingResult:
    """Decide single or multi for a rewritten question; never raises for a failing classifier or model."""
    score = rule_score(features)
    if mode in ("single", "multi"):
        reason = f"retrieval_mode={mode}"
        return RoutingResult(RouteDecision(mode, "forced", score, reason, features=features))

    by_rule = decide_by_rule(score, features.entities, thresholds)
    if by_rule == "multi":
        reason = f"rule score {score:.2f} >= {thresholds.rule_multi}"
        return RoutingResult(RouteDecision(by_rule, "rule", score, reason, features=features))
    if by_rule == "single":
        reason = f"rule score {score:.2f} <= {thresholds.rule_single} with {features.entities} entities"
        return RoutingResult(RouteDecision(by_rule, "rule", score, reason, features=features))

    notes = [f"rule score {score:.2f} undecided"]
    probability: float | None = None
    if classifier is None:
        notes.append("no classifier configured")
    else:
        probability, problem = await _classify(classifier, question, features, classifier_timeout)
        if probability is None:
            notes.append(problem)
        else:
            by_classifier = decide_by_classifier(probability, thresholds)
            if by_classifier is not None:
                reason = f"classifier probability {probability:.2f}"
                return RoutingResult(
                    RouteDecision(by_classifier, "classifier", score, reason, probability, None, features)
                )
            notes.append(f"classifier uncertain ({probability:.2f})")

    usage, calls = Usage(), 0
    if engine is None:
        notes.append("no model vote")
    else:
        calls = 1
        try:
            vote, usage = await engine.vote_multihop(question)
        except KbError as exc:
            notes.append(f"model vote failed ({exc.code})")
        else:
            if isinstance(vote, bool):
                notes.append(f"model voted {'multi' if vote else 'single'}")
                decision: Route = "multi" if vote else "single"
                return RoutingResult(
                    RouteDecision(decision, "model", score, "; ".join(notes), probability, vote, features),
                    usage,
                    calls,
                )
            notes.append("model vote was not yes/no")

    fallback = decide_fallback(score, probability, thresholds)
    notes.append(
        f"fallback: rule >= {thresholds.fallback_rule} or classifier >= {thresholds.fallback_classifier}"
        f" -> {fallback}"
    )
    return RoutingResult(
        RouteDecision(fallback, "fallback", score, "; ".join(notes), probability, None, features),
        usage,
        calls,
    )
