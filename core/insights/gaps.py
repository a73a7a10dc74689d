"""The knowledge base's gaps: answered questions that ended unsure or disliked, grouped by topic.

A record is a gap when its answer carried an uncertainty notice, stated something no source holds, or got a
thumbs-down. Gaps are grouped by the meaning of their (rewritten) questions: each question joins the group
whose centroid is closest when at least ``SAME_TOPIC`` similar (unit vectors, so cosine), else starts one.
Pure: the vectors come from the caller (the offline encoder at the edge).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from core.record import Record

SAME_TOPIC = 0.55  # cosine similarity from which a question joins a group's topic
EXAMPLES = 3  # example questions shown per group
DOCUMENTS = 3  # closest documents shown per group
REASONS = ("notice", "unsupported", "thumbs_down")


def gap_reasons(record: Record) -> tuple[str, ...]:
    """Why the record is a gap (empty: it is not one): a notice, an unsupported claim, a thumbs-down."""
    details = record.details
    reasons = []
    if details.notice:
        reasons.append("notice")
    if details.unsupported:
        reasons.append("unsupported")
    if any(verdict.value == "down" for verdict in details.feedback):
        reasons.append("thumbs_down")
    return tuple(reasons)


def searched_datasets(record: Record) -> tuple[str, ...]:
    """The datasets the record's question was searched in (empty when its trace does not say)."""
    trace = record.details.trace
    return tuple(trace.datasets or ()) if trace is not None else ()


def topic_text(record: Record) -> str:
    """What a gap is about: the rewritten, self-contained question, else the question."""
    return record.rewritten or record.question


@dataclass(frozen=True, slots=True)
class Gap:
    """One topic the knowledge base did not cover well: how often, examples, what was missing, where it looked."""

    count: int
    examples: tuple[str, ...]
    missing: tuple[str, ...]  # the parts judged missing (the notices' named gaps), most frequent first
    documents: tuple[str, ...]  # the documents its answers cited, most frequent first
    reasons: dict[str, int]
    record_ids: tuple[int, ...]
    last_asked: float

    def to_json(self) -> dict[str, object]:
        return {
            "count": self.count,
            "examples": list(self.examples),
            "missing": list(self.missing),
            "documents": list(self.documents),
            "reasons": dict(self.reasons),
            "record_ids": list(self.record_ids),
            "last_asked": self.last_asked,
        }


def group_by_topic(vectors: Sequence[Sequence[float]], *, threshold: float = SAME_TOPIC) -> list[list[int]]:
    """Indexes of unit vectors grouped greedily in order: each joins the group whose centroid is the most
    similar at or above the threshold, else starts a group."""
    groups: list[list[int]] = []
    sums: list[list[float]] = []
    norms: list[float] = []
    for index, vector in enumerate(vectors):
        best, similarity = -1, threshold
        for number, total in enumerate(sums):
            score = (
                sum(a * b for a, b in zip(vector, total, strict=True)) / norms[number]
                if norms[number]
                else 0.0
            )
            if score >= similarity:
                best, similarity = number, score
        if best < 0:
            groups.append([index])
            sums.append(list(vector))
            norms.append(math.sqrt(sum(a * a for a in vector)))
        else:
            groups[best].append(index)
            sums[best] = [a + b for a, b in zip(sums[best], vector, strict=True)]
            norms[best] = math.sqrt(sum(a * a for a in sums[best]))
    return groups


def _missing(record: Record) -> str:
    trace = record.details.trace
    return (trace.missing if trace is not None and trace.missing else "") or ""


def summarise_gaps(records: Sequence[Record], groups: Sequence[Sequence[int]]) -> list[Gap]:
    """One Gap per group, the most asked first (then the most recent)."""
    gaps = []
    for members in groups:
        chosen = [records[i] for i in members]
        newest_first = sorted(chosen, key=lambda r: -r.created_at)
        missing = Counter(text for r in chosen if (text := _missing(r)))
        documents = Counter(name for r in chosen for name in {c.document for c in r.details.citations})
        reasons = Counter(reason for r in chosen for reason in gap_reasons(r))
        gaps.append(
            Gap(
                count=len(chosen),
                examples=tuple(dict.fromkeys(r.question for r in newest_first))[:EXAMPLES],
                missing=tuple(text for text, _ in missing.most_common(EXAMPLES)),
                documents=tuple(name for name, _ in documents.most_common(DOCUMENTS)),
                reasons={reason: reasons[reason] for reason in REASONS if reasons[reason]},
                record_ids=tuple(r.id for r in newest_first),
                last_asked=newest_first[0].created_at,
            )
        )
    return sorted(gaps, key=lambda gap: (-gap.count, -gap.last_asked))
