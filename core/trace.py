"""The retrieval trace as typed values: routing decision, rounds, stop reason, rerank; JSON only at the edge.

Retrieval builds a :class:`RetrievalTrace` immutably, the pipeline adds what it searched
(rewritten question, datasets, search mode) and keeps it in the record's details (core.record), which
store ``to_json()`` and parse a stored trace once with :func:`record_trace`; readers read attributes. ``from_json`` reads today's rows and older, partial ones: a missing key takes its default and a
stop reason this version does not know is kept as its string. The stop labels are derived from the stop
reason; ``to_json`` still writes them (``stop_label_zh``/``stop_label_en``) for readers of the raw JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from core.messages import text

Route = Literal["single", "multi"]
Source = Literal["rule", "classifier", "model", "fallback", "forced"]


class StopReason(StrEnum):
    """Why the retrieval loop stopped."""

    SUFFICIENT = "sufficient"
    MAX_ROUNDS = "max_rounds"
    DUPLICATE_QUERY = "duplicate_query"
    NO_NEW_EVIDENCE = "no_new_evidence"
    EVIDENCE_BUDGET = "evidence_budget"
    NO_FOLLOWUP_QUERY = "no_followup_query"
    NO_DATASETS = "no_datasets"
    ASSESSMENT_ERROR = "assessment_error"
    SINGLE_SEARCH = "single_search"


def stop_reason_label(reason: StopReason, lang: str) -> str:
    """The label of a stop reason in lang's language (the catalogue's ``stop.<reason>``)."""
    return text(f"stop.{reason.value}", lang)


FEATURE_NAMES: tuple[str, ...] = (
    "comparison_markers",
    "logical_connectors",
    "entities",
    "bridge_entities",
    "tokens",
)


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _float(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _str(value: object) -> str:
    return value if isinstance(value, str) else ""


def _strs(value: object) -> tuple[str, ...]:
    return tuple(str(item) for item in _items(value))


def _items(value: object) -> tuple[object, ...]:
    return tuple(value) if isinstance(value, list | tuple) else ()


def _mapping(value: object) -> Mapping[str, Any] | None:
    return value if isinstance(value, Mapping) else None


def _route(value: object) -> Route:
    return "multi" if value == "multi" else "single"


def _stop_reason(value: object) -> StopReason | str:
    if not isinstance(value, str):
        return ""
    try:
        return StopReason(value)
    except ValueError:
        return value


@dataclass(frozen=True, slots=True)
class ComplexityFeatures:
    """The complexity features of one question (counts), with the markers that produced them.

    core.retrieval.complexity extracts them (its docstring defines each count); the router scores them and
    the trace records them.
    """

    comparison_markers: int
    logical_connectors: int
    entities: int
    bridge_entities: int
    tokens: int
    markers: tuple[str, ...] = ()
    entity_names: tuple[str, ...] = ()

    def as_vector(self) -> tuple[float, float, float, float, float]:
        """The five numeric features, in FEATURE_NAMES order, for the classifier service."""
        return (
            float(self.comparison_markers),
            float(self.logical_connectors),
            float(self.entities),
            float(self.bridge_entities),
            float(self.tokens),
        )

    def as_dict(self) -> dict[str, float]:
        """The five numeric features by name (the classifier request's ``features``)."""
        return dict(zip(FEATURE_NAMES, self.as_vector(), strict=True))

    def to_json(self) -> dict[str, object]:
        """The stored form: counts plus the matched markers and entities."""
        return {
            **{name: int(value) for name, value in self.as_dict().items()},
            "markers": list(self.markers),
            "entity_names": list(self.entity_names),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ComplexityFeatures:
        """The features of a stored trace (a missing count reads as 0)."""
        return cls(
            comparison_markers=_int(data.get("comparison_markers")),
            logical_connectors=_int(data.get("logical_connectors")),
            entities=_int(data.get("entities")),
            bridge_entities=_int(data.get("bridge_entities")),
            tokens=_int(data.get("tokens")),
            markers=_strs(data.get("markers")),
            entity_names=_strs(data.get("entity_names")),
        )


@dataclass(frozen=True, slots=True)
class RouteDecision:
    """The route taken for one question and why (recorded in the trace, used for later training).

    source is one of :data:`Source` when the router made the decision; a stored trace may name another.
    """

    decision: Route
    source: Source | str
    rule_score: float
    reason: str
    classifier_probability: float | None = None
    model_vote: bool | None = None
    features: ComplexityFeatures | None = None

    def to_json(self) -> dict[str, object]:
        """The stored form (the trace's ``complexity``)."""
        return {
            "decision": self.decision,
            "source": self.source,
            "rule_score": self.rule_score,
            "classifier_probability": self.classifier_probability,
            "model_vote": self.model_vote,
            "reason": self.reason,
            "features": self.features.to_json() if self.features else None,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RouteDecision:
        """The decision of a stored trace (missing: single, no source, score 0, no probability or vote)."""
        vote = data.get("model_vote")
        features = _mapping(data.get("features"))
        return cls(
            decision=_route(data.get("decision")),
            source=_str(data.get("source")),
            rule_score=_float(data.get("rule_score")) or 0.0,
            reason=_str(data.get("reason")),
            classifier_probability=_float(data.get("classifier_probability")),
            model_vote=vote if isinstance(vote, bool) else None,
            features=ComplexityFeatures.from_json(features) if features is not None else None,
        )


@dataclass(frozen=True, slots=True)
class RoundStep:
    """One round of retrieval: what it searched, what it added, and the assessment of the evidence so far.

    overruled: the model said sufficient and the deterministic key-term check did not agree.
    partial: not sufficient only in degree (every part partly supported, nothing named or asked for absent).
    referenced_ids: the paragraphs admitted because the round's new evidence refers to them (cited
    articles, documents named by title), a part of new_paragraph_ids.
    """

    round: int
    queries: tuple[str, ...] = ()
    new_paragraph_ids: tuple[str, ...] = ()
    total_evidence: int = 0
    sufficient: bool = False
    missing: str = ""
    next_queries: tuple[str, ...] = ()
    overruled: bool = False
    referenced_ids: tuple[str, ...] = ()
    partial: bool = False

    def to_json(self) -> dict[str, object]:
        """The stored form (``overruled``, ``referenced_ids`` and ``partial`` only when set)."""
        data: dict[str, object] = {
            "round": self.round,
            "queries": list(self.queries),
            "new_paragraph_ids": list(self.new_paragraph_ids),
            "total_evidence": self.total_evidence,
            "sufficient": self.sufficient,
            "missing": self.missing,
            "next_queries": list(self.next_queries),
        }
        if self.overruled:
            data["overruled"] = True
        if self.referenced_ids:
            data["referenced_ids"] = list(self.referenced_ids)
        if self.partial:
            data["partial"] = True
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RoundStep:
        """A stored round (missing fields take their defaults; round 0 when unnumbered)."""
        return cls(
            round=_int(data.get("round")),
            queries=_strs(data.get("queries")),
            new_paragraph_ids=_strs(data.get("new_paragraph_ids")),
            total_evidence=_int(data.get("total_evidence")),
            sufficient=bool(data.get("sufficient")),
            missing=_str(data.get("missing")),
            next_queries=_strs(data.get("next_queries")),
            referenced_ids=_strs(data.get("referenced_ids")),
            overruled=bool(data.get("overruled")),
            partial=bool(data.get("partial")),
        )


@dataclass(frozen=True, slots=True)
class RerankSummary:
    """The final rerank: the reranker's name, candidates in, paragraphs kept; the failed one it replaced."""

    method: str
    candidates: int = 0
    kept: int = 0
    fallback_from: str = ""
    error: str = ""

    def to_json(self) -> dict[str, object]:
        """The stored form (``fallback_from`` and ``error`` only after a fallback)."""
        data: dict[str, object] = {"method": self.method}
        if self.fallback_from:
            data.update(fallback_from=self.fallback_from, error=self.error)
        data.update(candidates=self.candidates, kept=self.kept)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RerankSummary:
        """A stored rerank summary."""
        return cls(
            method=_str(data.get("method")),
            candidates=_int(data.get("candidates")),
            kept=_int(data.get("kept")),
            fallback_from=_str(data.get("fallback_from")),
            error=_str(data.get("error")),
        )


NO_RERANK = RerankSummary(method="none")


Origin = Literal["question", "answer", "citation"]
ORIGINS: tuple[Origin, ...] = ("question", "answer", "citation")


@dataclass(frozen=True, slots=True)
class CarriedTerm:
    """A term a follow-up's rewrite has and the follow-up did not, and where it came from: an earlier
    question, an earlier answer, or a document an earlier answer cited (core.retrieval.topic)."""

    term: str
    origin: Origin
    record_id: int

    def to_json(self) -> dict[str, object]:
        """The stored form."""
        return {"term": self.term, "origin": self.origin, "record_id": self.record_id}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CarriedTerm | None:
        """A stored carried term; None when it is not one."""
        origin = data.get("origin")
        if origin not in ORIGINS or not isinstance(data.get("term"), str):
            return None
        return cls(str(data["term"]), origin, _int(data.get("record_id")))


@dataclass(frozen=True, slots=True)
class RetrievalTrace:
    """How one question's evidence was found (only queries and evidence judgements, never model reasoning).

    complexity and rerank are None for the plain single-search retriever, which neither routes nor
    reranks. rewritten, datasets and search_mode are what the pipeline searched; None until it sets them.
    stop_reason is a plain string only when read from a stored trace that names a reason this version
    does not know ("" when the trace names none).
    """

    mode: Route = "single"
    escalated: bool = False
    complexity: RouteDecision | None = None
    rounds: tuple[RoundStep, ...] = ()
    stop_reason: StopReason | str = ""
    sufficient: bool = False
    missing: str = ""
    rerank: RerankSummary | None = None
    partial: bool = False  # not sufficient only in degree: the answer carries no notice
    run_time: float = 0.0
    rewritten: str | None = None
    datasets: tuple[str, ...] | None = None
    search_mode: str | None = None
    carried: tuple[CarriedTerm, ...] = ()

    def stop_label(self, lang: str) -> str:
        """The stop reason's Chinese or English label (an unknown reason as it was stored)."""
        if isinstance(self.stop_reason, StopReason):
            return stop_reason_label(self.stop_reason, lang)
        return self.stop_reason

    def to_json(self) -> dict[str, Any]:  # JSON boundary: the record's details["trace"], `kb trace --json`
        """The stored form, key for key as the record's details hold it."""
        data: dict[str, Any] = {}
        if self.rewritten is not None:
            data["rewritten"] = self.rewritten
        if self.carried:
            data["carried"] = [term.to_json() for term in self.carried]
        if self.datasets is not None:
            data["datasets"] = list(self.datasets)
        if self.search_mode is not None:
            data["search_mode"] = self.search_mode
        data.update(mode=self.mode, escalated=self.escalated)
        if self.complexity is not None:
            data["complexity"] = self.complexity.to_json()
        data.update(
            rounds=[step.to_json() for step in self.rounds],
            stop_reason=str(self.stop_reason),
            stop_label_zh=self.stop_label("zh"),
            stop_label_en=self.stop_label("en"),
            sufficient=self.sufficient,
            missing=self.missing,
        )
        if self.partial:
            data["partial"] = True
        if self.rerank is not None:
            data["rerank"] = self.rerank.to_json()
        data["run_time"] = self.run_time
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RetrievalTrace:
        """A stored trace, today's or an older, partial one (see the module docstring)."""
        complexity = _mapping(data.get("complexity"))
        rerank = _mapping(data.get("rerank"))
        rewritten = data.get("rewritten")
        datasets = data.get("datasets")
        search_mode = data.get("search_mode")
        rounds = data.get("rounds")
        return cls(
            mode=_route(data.get("mode")),
            escalated=bool(data.get("escalated")),
            complexity=RouteDecision.from_json(complexity) if complexity else None,
            rounds=tuple(RoundStep.from_json(step) for step in _items(rounds) if isinstance(step, Mapping)),
            stop_reason=_stop_reason(data.get("stop_reason")),
            sufficient=bool(data.get("sufficient")),
            missing=_str(data.get("missing")),
            partial=bool(data.get("partial")),
            rerank=RerankSummary.from_json(rerank) if rerank else None,
            run_time=_float(data.get("run_time")) or 0.0,
            rewritten=rewritten if isinstance(rewritten, str) else None,
            datasets=_strs(datasets) if isinstance(datasets, list | tuple) else None,
            search_mode=search_mode if isinstance(search_mode, str) else None,
            carried=tuple(
                term
                for item in _items(data.get("carried"))
                if isinstance(item, Mapping) and (term := CarriedTerm.from_json(item)) is not None
            ),
        )


def record_trace(details: Mapping[str, Any]) -> RetrievalTrace | None:
    """The trace stored in a record's details, parsed; None when the record has none (or an empty one)."""
    stored = details.get("trace")
    return RetrievalTrace.from_json(stored) if isinstance(stored, Mapping) and stored else None
