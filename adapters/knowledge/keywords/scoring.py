"""BM25 over several keyword segments with the statistics of all of them, computed at query time.

The formula, operand types and rounding are bm25s's ("lucene" method and idf, float32 scores) so the
ranking is the one the index had when it was one bm25s matrix (tests/kb/test_keyword_segments.py
compares every score with bm25s). Removed rows count for nothing: not in the chunk count, the
average length, a token's document frequency, nor the results.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from adapters.knowledge.keywords.segment import Segment

# k1 0.9 / b 0.4 (mild length normalisation): on zh_laws the long but on-point article 20 of the
# 2023 administrative-reconsideration law went from rank 3 (k1 1.2, b 0.75) to rank 1 for three
# phrasings of "行政复议申请期限"; CMRC 2018 dev recall@5 stayed 0.995.
BM25_K1 = 0.9
BM25_B = 0.4


@dataclass(frozen=True, slots=True)
class Part:
    """A segment as searched: which of its rows are alive (None: all of them)."""

    segment: Segment
    alive: np.ndarray | None

    @property
    def live_rows(self) -> int:
        return len(self.segment) if self.alive is None else int(self.alive.sum())

    def live_length(self) -> int:
        lengths = np.asarray(self.segment.lengths, dtype=np.int64)
        return int(lengths.sum() if self.alive is None else lengths[self.alive].sum())


@dataclass(frozen=True, slots=True)
class Searchable:
    """Parts and the statistics BM25 needs of all of them together (computed once per state)."""

    parts: tuple[Part, ...]
    documents: int
    average_length: float

    @classmethod
    def of(cls, parts: Sequence[Part]) -> Searchable:
        documents = sum(part.live_rows for part in parts)
        total = sum(part.live_length() for part in parts)
        return cls(tuple(parts), documents, total / documents if documents else 0.0)


def _live_postings(part: Part, token: str) -> tuple[np.ndarray, np.ndarray] | None:
    found = part.segment.postings(token)
    if found is None or part.alive is None:
        return found
    rows, tf = found
    keep = part.alive[rows]
    return rows[keep], tf[keep]


def top_scores(index: Searchable, words: Sequence[str], k: int) -> list[tuple[str, float]]:
    """Up to k (chunk id, BM25 score) pairs with score > 0, best first, ties by id.

    Words unknown to every segment are left out, as bm25s leaves out tokens outside its vocabulary; a
    word given twice counts twice, as in bm25s.
    """
    if k <= 0 or index.documents == 0:
        return []
    postings = [[_live_postings(part, word) for part in index.parts] for word in words]
    frequencies = [sum(len(p[0]) for p in per_part if p is not None) for per_part in postings]
    found: list[tuple[str, float]] = []
    for number, part in enumerate(index.parts):
        lengths = part.segment.lengths
        scores: np.ndarray | None = None
        for per_part, frequency in zip(postings, frequencies, strict=True):
            hit = per_part[number]
            if hit is None or len(hit[0]) == 0:
                continue
            rows, counts = hit
            idf = np.float32(math.log(1 + (index.documents - frequency + 0.5) / (frequency + 0.5)))
            length_part = BM25_K1 * (
                (1 - BM25_B) + BM25_B * lengths[rows].astype(np.float64) / index.average_length
            )
            tf = counts.astype(np.float32)
            if scores is None:
                scores = np.zeros(len(part.segment), dtype=np.float32)
            scores[rows] += (idf * (tf / (length_part + tf))).astype(np.float32)
        if scores is None:
            continue
        positive = np.flatnonzero(scores > 0)
        if positive.size > k:  # the k best, and every row tied with the k-th (ties go by id below)
            kth = -np.partition(-scores[positive], k - 1)[k - 1]
            positive = positive[scores[positive] >= kth]
        found.extend((part.segment.ids[row], float(scores[row])) for row in positive.tolist())
    best: dict[str, float] = {}
    for chunk_id, score in found:  # the same chunk in two segments (a race of two writers): its best
        if score > best.get(chunk_id, 0.0):
            best[chunk_id] = score
    return sorted(best.items(), key=lambda pair: (-pair[1], pair[0]))[:k]
