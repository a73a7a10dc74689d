"""BM25 over several keyword segments with the statistics of all of them, computed at query time.

The formula, operand types and rounding are bm25s's ("lucene" method and idf, float32 scores) so the
ranking is the one the index had when it was one bm25s matrix (tests/kb/test_keyword_segments.py
compares every score with bm25s). Removed rows count for nothing: not in the chunk count, the
average length, a token's document frequency, nor the results.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from adapters.knowledge.keywords.segment import Segment

# k1 0.9 / b 0.4 (mild length normalisation): on zh_laws the long but on-point article 20 of the
# 2023 administrative-reconsideration law went from rank 3 (k1 1.2, b 0.75) to rank 1 for three
# phrasings of "行政复议申请期限"; CMRC 2018 dev recall@5 stayed 0.995.
BM25_K1 = 0.9
BM25_B = 0.4
CACHE_BYTES = 64 * 1024 * 1024  # per state of the index: the scores of the words searched lately
_Scores = tuple[np.ndarray, np.ndarray] | None


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


class Searchable:
    """Parts and the statistics BM25 needs of all of them together, fixed for one state of the index.

    A word's scores in each part depend only on that state, so they are computed once and kept (up to
    CACHE_BYTES, the least recently used dropped first): a frequent word, the costly kind, is then one
    gather-add per search, as with scores precomputed for the whole corpus.
    """

    def __init__(
        self, parts: Sequence[Part], documents: int, average_length: float, cache_bytes: int = CACHE_BYTES
    ) -> None:
        self.parts = tuple(parts)
        self.cache_bytes = cache_bytes
        self.documents = documents
        self.average_length = average_length
        self._norms: list[np.ndarray | None] = [None] * len(self.parts)
        self._cache: OrderedDict[str, tuple[_Scores, ...]] = OrderedDict()
        self._cached_bytes = 0
        self._lock = threading.Lock()

    @classmethod
    def of(cls, parts: Sequence[Part], cache_bytes: int = CACHE_BYTES) -> Searchable:
        documents = sum(part.live_rows for part in parts)
        total = sum(part.live_length() for part in parts)
        return cls(tuple(parts), documents, total / documents if documents else 0.0, cache_bytes)

    @property
    def cached_bytes(self) -> int:
        """What the kept word scores take (never more than cache_bytes)."""
        return self._cached_bytes

    def _norm(self, number: int) -> np.ndarray:
        """k1 * ((1 - b) + b * length / average length) of each row of a part (bm25s's float64)."""
        norm = self._norms[number]
        if norm is None:
            lengths = np.asarray(self.parts[number].segment.lengths, dtype=np.float64)
            norm = BM25_K1 * ((1 - BM25_B) + BM25_B * lengths / self.average_length)
            self._norms[number] = norm
        return norm

    def scores_of(self, word: str) -> tuple[_Scores, ...]:
        """Per part, (rows, float32 scores) of the live rows holding word (None where none does)."""
        with self._lock:
            found = self._cache.get(word)
            if found is not None:
                self._cache.move_to_end(word)
                return found
        postings = [_live_postings(part, word) for part in self.parts]
        frequency = sum(len(hit[0]) for hit in postings if hit is not None)
        idf = np.float32(math.log(1 + (self.documents - frequency + 0.5) / (frequency + 0.5)))
        scored: list[_Scores] = []
        for number, hit in enumerate(postings):
            if hit is None or len(hit[0]) == 0:
                scored.append(None)
                continue
            rows, counts = hit
            tf = counts.astype(np.float32)
            scored.append((rows, (idf * (tf / (self._norm(number)[rows] + tf))).astype(np.float32)))
        result = tuple(scored)
        size = _nbytes(result)
        with self._lock:
            if word not in self._cache and size <= self.cache_bytes:
                self._cache[word] = result
                self._cached_bytes += size
                while self._cached_bytes > self.cache_bytes:
                    _, dropped = self._cache.popitem(last=False)
                    self._cached_bytes -= _nbytes(dropped)
        return result


def _nbytes(scores: tuple[_Scores, ...]) -> int:
    """What one word's kept scores take."""
    return sum(rows.nbytes + values.nbytes for rows, values in filter(None, scores))


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
    per_word = [index.scores_of(word) for word in words]
    found: list[tuple[str, float]] = []
    for number, part in enumerate(index.parts):
        scores: np.ndarray | None = None
        for scored in per_word:
            hit = scored[number]
            if hit is None:
                continue
            if scores is None:
                scores = np.zeros(len(part.segment), dtype=np.float32)
            rows, values = hit
            scores[rows] += values
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
