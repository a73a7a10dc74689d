"""Evidence assessment without a model: which parts of the question the evidence supports, and what to search next.

The question is split into parts (parts.py: clauses, enumerations, one part per compared entity). Each
part is judged on its own (support.py): covered by one paragraph, or by a paragraph and a paragraph
linked to it, with entity-like terms weighing more than generic words and answer-type words not
counted (salience.py); a bridge-shaped part also needs the paragraph about the bridge entity. Terms
scattered over unrelated paragraphs never cover a part. Uncovered parts become the ``missing`` text
and, at most two, the next queries (followup.py), never a normalised repeat of a searched query.
``part_coverage`` is the plain all-evidence term share the extractive answer uses.
CPU-bound (jieba): call from a worker thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from adapters.extractive.comparison import compared_entities
from adapters.extractive.followup import choices, note, pick
from adapters.extractive.parts import question_parts
from adapters.extractive.salience import Stack, part_terms
from adapters.extractive.support import PartSupport, analyse_part, hit_text
from adapters.extractive.terms import Haystack, terms
from core.models import Assessment, Hit
from core.text import detect_language

DEFAULT_COVERAGE_THRESHOLD = 0.6

__all__ = [
    "DEFAULT_COVERAGE_THRESHOLD",
    "PartCoverage",
    "assess_evidence",
    "hit_text",
    "judge_parts",
    "part_coverage",
]


@dataclass(frozen=True, slots=True)
class PartCoverage:
    """How much of one part's salient terms a haystack contains (the answer's plain check)."""

    part: str
    terms: tuple[str, ...]
    matched: tuple[str, ...]

    @property
    def share(self) -> float:
        """Matched terms over all terms (1.0 for a part without terms)."""
        return len(self.matched) / len(self.terms) if self.terms else 1.0


def part_coverage(part: str, haystack: Haystack) -> PartCoverage:
    """Coverage of one part by the evidence haystack."""
    wanted = tuple(terms(part))
    return PartCoverage(part, wanted, tuple(haystack.matched(wanted)))


def judge_parts(question: str, evidence: Sequence[Hit], *, threshold: float) -> list[PartSupport]:
    """Each part of the question with its support in the evidence."""
    stacks = [Stack.of(hit_text(hit)) for hit in evidence]
    parts = question_parts(question)
    foci = compared_entities(parts)
    weighted = [part_terms(part, focus=focus) for part, focus in zip(parts, foci, strict=True)]
    if any(t.total for t in weighted):  # a part of nothing but answer-type words ("Which year") adds no gap
        kept = [(t, focus) for t, focus in zip(weighted, foci, strict=True) if t.total]
    else:
        kept = list(zip(weighted, foci, strict=True))
    return [
        analyse_part(t, evidence, stacks, question=question, threshold=threshold, compared=bool(focus))
        for t, focus in kept
    ]


def assess_evidence(
    question: str,
    evidence: Sequence[Hit],
    searched: Sequence[str],
    *,
    threshold: float = DEFAULT_COVERAGE_THRESHOLD,
) -> Assessment:
    """The verdict {sufficient, missing, queries} for the evidence gathered so far (newest last)."""
    english = detect_language(question) == "en"
    supports = judge_parts(question, evidence, threshold=threshold)
    if evidence and all(s.covered for s in supports):
        return Assessment(sufficient=True)
    gaps = [s for s in supports if not s.covered or not evidence]
    queries = pick([choices(s, question) for s in gaps], searched)
    notes = [note(s, english=english) for s in gaps]
    return Assessment(
        sufficient=False, missing=("; " if english else "；").join(notes), queries=tuple(queries)
    )
