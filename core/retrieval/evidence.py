"""The evidence a multi-hop loop accumulates: limits, per-round admission, budget fitting, follow-up choice."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from core.budget import clip, count_tokens
from core.knowledge.search import distinct_passages, passage_key
from core.messages import text
from core.models import Hit, Usage
from core.text import normalize_query
from core.trace import RoundStep, StopReason

QUESTION_TOKENS = 1000
MISSING_TOKENS = 400
QUERY_TOKENS = 500


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, int(value)))


@dataclass(frozen=True, slots=True)
class LoopLimits:
    """Bounds of the loop (out-of-range values clamp, as the settings do).

    candidates_per_round caps the new paragraphs each follow-up round adds (docs/design.md#admission).
    Round 1 keeps the first search whole, searched at least first_round_depth deep (what one plain
    search shows), so routing a question to the loop never loses what one search finds
    (docs/storage.md#multi-hop-retrieval-never-finds-less-than-one-search); cap_first_round=True applies the
    cap to round 1 as well.
    """

    max_rounds: int = 3
    evidence_tokens: int = 16000
    max_paragraphs: int = 40
    queries_per_round: int = 2
    candidates_per_round: int = 8
    first_round_depth: int = 10
    cap_first_round: bool = False
    references_per_round: int = 4  # paragraphs a round's new evidence may bring in by referring to them

    def __post_init__(self) -> None:
        object.__setattr__(self, "max_rounds", _clamp(self.max_rounds, 1, 6))
        object.__setattr__(self, "evidence_tokens", _clamp(self.evidence_tokens, 1000, 24000))
        object.__setattr__(self, "max_paragraphs", _clamp(self.max_paragraphs, 1, 100))
        object.__setattr__(self, "queries_per_round", _clamp(self.queries_per_round, 1, 4))
        object.__setattr__(self, "candidates_per_round", _clamp(self.candidates_per_round, 1, 50))
        object.__setattr__(self, "first_round_depth", _clamp(self.first_round_depth, 1, 50))
        object.__setattr__(self, "references_per_round", _clamp(self.references_per_round, 0, 20))


def hit_tokens(hit: Hit) -> int:
    """What one paragraph costs in the evidence budget (content plus its document and heading)."""
    return count_tokens(f"{hit.document_name}\n{hit.heading}\n{hit.content}")


def fit_budget(hits: Sequence[Hit], limits: LoopLimits, *, keep: Sequence[str] = ()) -> list[Hit]:
    """The hits that fit the token budget and the paragraph cap, in the given (reranked) order.

    The ids in ``keep`` (the first search's top hits) are admitted first, so a rerank can reorder them but
    never push them out; the other hits fill the remaining room in order.
    """
    protected = set(keep)
    chosen: set[str] = set()
    used = 0
    for wanted in (True, False):
        for hit in hits:
            if (hit.id in protected) != wanted or hit.id in chosen:
                continue
            size = hit_tokens(hit)
            if len(chosen) >= limits.max_paragraphs or used + size > limits.evidence_tokens:
                continue
            chosen.add(hit.id)
            used += size
    return [hit for hit in hits if hit.id in chosen]


def pick_queries(proposed: Sequence[object], searched: set[str], limit: int) -> list[str]:
    """At most limit follow-up queries, clipped; fresh ones first, so a repeat only wins when nothing is new."""
    candidates = [
        clip(item.strip(), QUERY_TOKENS, marker=False)
        for item in proposed
        if isinstance(item, str) and item.strip()
    ]
    fresh: list[str] = []
    for query in candidates:
        key = normalize_query(query)
        if key and key not in searched and all(normalize_query(q) != key for q in fresh):
            fresh.append(query)
    return (fresh or candidates)[:limit]


@dataclass
class LoopState:
    """Mutable state of one question's loop: evidence by id, searched queries, rounds, cost, verdict."""

    question: str
    lang: str
    datasets: tuple[str, ...] = ()
    evidence: dict[str, Hit] = field(default_factory=dict)
    searched: dict[str, str] = field(default_factory=dict)
    rounds: list[RoundStep] = field(default_factory=list)
    used_tokens: int = 0
    usage: Usage = field(default_factory=Usage)
    model_calls: int = 0
    sufficient: bool = False
    missing: str = ""
    partial: bool = False  # the last verdict: not sufficient only in degree (Assessment.partial)
    stop: StopReason = StopReason.MAX_ROUNDS

    def message(self, key: str) -> str:
        """A fixed message in the question's language (the catalogue's ``evidence.<key>``)."""
        return text(f"evidence.{key}", self.lang)

    def admit(self, found: Sequence[Hit], limits: LoopLimits, *, first: bool) -> tuple[list[str], bool]:
        """Keep the best new candidates of a round within the caps; (added ids, budget exhausted). A copy of a
        passage already held or ranked higher (the same document name, heading and text) is no candidate."""
        best: dict[str, Hit] = {}
        for hit in found:
            if hit.id not in self.evidence and (hit.id not in best or hit.score > best[hit.id].score):
                best[hit.id] = hit
        held = {passage_key(hit) for hit in self.evidence.values()}
        ranked = [
            hit
            for hit in distinct_passages(sorted(best.values(), key=lambda hit: (-hit.score, hit.id)))
            if passage_key(hit) not in held
        ]
        if limits.cap_first_round or not first:
            ranked = ranked[: limits.candidates_per_round]
        added: list[str] = []
        exhausted = False
        for hit in ranked:
            size = hit_tokens(hit)
            if (
                len(self.evidence) >= limits.max_paragraphs
                or self.used_tokens + size > limits.evidence_tokens
            ):
                exhausted = True
                continue
            self.evidence[hit.id] = hit
            self.used_tokens += size
            added.append(hit.id)
        return added, exhausted
