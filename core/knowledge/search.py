"""Pure search logic: request validation, query-length tiers, merging groups and blend-mode fusion.

Scores (all "higher is better"):

* ``embedding``: cosine similarity ``1 - cosine distance`` as the store reports it.
* ``keywords``: raw BM25 turned into [0, 1) by :func:`normalise_bm25` (``s / (s + half)``), so one
  threshold scale works for every mode.
* ``blend``: never the raw sum of the two (docs/design.md#blend-fusion): cosine and BM25 live on
  different scales, so the sum is dominated by whichever happens to be larger. Two documented fusions
  are offered:

  - :func:`rrf_fuse`, Reciprocal Rank Fusion (Cormack et al. 2009): ``sum_i w_i / (k + rank_i)``,
    rank-only, robust to any score scale. The sum is divided by its maximum ``sum_i w_i / (k + 1)`` so a
    hit ranked first everywhere scores 1.0 and thresholds live in [0, 1].
  - :func:`relative_score_fuse`, Weaviate's relativeScoreFusion: each list is min-max normalised to
    [0, 1], then ``vector_weight * v + (1 - vector_weight) * k``; a hit missing from a list gets 0 there.
    It keeps how much better the top hits are, which pure ranks lose.

  On 20 hand-labelled zh_laws questions (chunking as in core.knowledge.chunking, USE-m3, jieba + bm25s, fused
  over the top 100 of each list) the top-3 rate was embedding .65, keywords .65, RRF .70 and relative
  score .85 (MRR .47 / .52 / .57 / .62).

  Both are deterministic: fused scores are rounded to 12 decimals (so summation-order noise cannot
  decide an order) and equal fused scores are ordered by id. :data:`FUSIONS` maps names to
  functions so the store can switch with a setting.

  Both alone give *relative* scores: a list's best hit gets full marks however weak it is, so a lone
  vector hit at cosine 0.01 would fuse to 0.5 like a real match. Each list's share is therefore scaled
  by its *confidence* (:func:`list_confidence`): its best absolute score over the score that counts as a
  clear match (:data:`CLEAR_COSINE`, :data:`CLEAR_KEYWORDS`), at most 1. A list whose best hit is a clear
  match fuses exactly as before; a list that found nothing clear cannot lift its hits to the level of
  the other list's real matches, and a query that matches nothing well fuses to low scores, which the
  request's threshold then drops (docs/design.md#blend-fusion). The caller applies the per-mode
  thresholds to the input lists before fusing and the request's threshold to the fused scores.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from core.errors import InvalidInput
from core.messages import phrase
from core.models import SEARCH_MODES, Hit, SearchMode, SearchRequest
from core.text import compact_length

DEFAULT_LIMIT = 10
MIN_LIMIT = 1
MAX_LIMIT = 50
RRF_K = 60
BM25_HALF_SCORE = 4.0
SCORE_DIGITS = 12  # fused scores are rounded so float noise cannot beat the id tie-break
# a vector list whose best hit reaches this is fully trusted in blend (see list_confidence)
CLEAR_COSINE = 0.5
CLEAR_KEYWORDS = 0.5  # likewise for normalise_bm25 scores: one distinctive term matched


@dataclass(frozen=True, slots=True)
class SearchTiers:
    """Query-length tiers: short queries get more candidates and a lower threshold.

    See docs/design.md#query-length-tiers.
    """

    short_length: int = 4
    topk_short: int = 20
    topk_medium: int = 12
    topk_long: int = 8
    min_score_short: float = 0.25
    min_score_default: float = 0.28
    medium_length: int = 12


def tier_for(query: str, tiers: SearchTiers) -> tuple[int, float]:
    """(limit, threshold) for a query by its length without whitespace: <= 4, <= 12, longer."""
    length = compact_length(query)
    if length <= tiers.short_length:
        return tiers.topk_short, tiers.min_score_short
    if length <= tiers.medium_length:
        return tiers.topk_medium, tiers.min_score_default
    return tiers.topk_long, tiers.min_score_default


def parse_mode(mode: str | None, *, default: SearchMode = "blend") -> SearchMode:
    """The search mode named by mode (case and surrounding spaces ignored); None gives the default."""
    if mode is None or not mode.strip():
        return default
    wanted = mode.strip().lower()
    for known in SEARCH_MODES:
        if known == wanted:
            return known
    valid = ", ".join(SEARCH_MODES)
    raise InvalidInput(phrase("error.unknown_search_mode", mode=mode, valid=valid))


def clamp_limit(limit: int | None) -> int:
    """The number of results: None gives 10, anything else is clamped to 1..50."""
    if limit is None:
        return DEFAULT_LIMIT
    return max(MIN_LIMIT, min(MAX_LIMIT, int(limit)))


def clamp_threshold(threshold: float | None) -> float:
    """The minimum score: None, NaN and negative values give 0."""
    if threshold is None or math.isnan(threshold) or threshold < 0:
        return 0.0
    return float(threshold)


def build_search_request(
    query: str,
    datasets: Sequence[str],
    *,
    mode: str | None = None,
    threshold: float | None = None,
    limit: int | None = None,
    default_mode: SearchMode = "blend",
) -> SearchRequest:
    """A validated SearchRequest; raises InvalidInput for a blank query or an unknown mode."""
    if query is None or not query.strip():
        raise InvalidInput(phrase("error.empty_query"))
    unique = tuple(dict.fromkeys(name.strip() for name in datasets if name and name.strip()))
    return SearchRequest(
        query=query.strip(),
        datasets=unique,
        mode=parse_mode(mode, default=default_mode),
        threshold=clamp_threshold(threshold),
        limit=clamp_limit(limit),
    )


def _rank_key(hit: Hit) -> tuple[float, str]:
    return (-hit.score, hit.id)


def _best_by_id(hits: Sequence[Hit]) -> list[Hit]:
    """Hits sorted best first (ties by id), keeping only the best-scored copy of each id."""
    ordered = sorted(hits, key=_rank_key)
    seen: set[str] = set()
    unique: list[Hit] = []
    for hit in ordered:
        if hit.id not in seen:
            seen.add(hit.id)
            unique.append(hit)
    return unique


def passage_key(hit: Hit) -> tuple[str, str, str]:
    """What makes two hits the same passage: the same document name, heading and text (the same file kept in
    two folders, or ingested twice into two datasets). Equal text under another document or heading is a
    different passage ("本法自公布之日起施行" of two laws)."""
    return (hit.document_name, hit.heading, " ".join(hit.content.split()))


def distinct_passages(hits: Sequence[Hit]) -> list[Hit]:
    """The hits in order, each passage once (passage_key): a copy of an earlier hit takes no place in the
    results, so it neither repeats a quote nor pushes another passage out of the evidence."""
    seen: set[tuple[str, str, str]] = set()
    kept: list[Hit] = []
    for hit in hits:
        key = passage_key(hit)
        if key not in seen:
            seen.add(key)
            kept.append(hit)
    return kept


def merge_ranked(groups: Sequence[Sequence[Hit]], *, limit: int) -> list[Hit]:
    """Merge the hits of several embedding-model groups: score descending, ties by id, at most limit."""
    merged = _best_by_id([hit for group in groups for hit in group])
    return merged[: max(0, limit)]


def rrf_fuse(
    ranked_lists: Sequence[Sequence[Hit]],
    *,
    k: int = RRF_K,
    weights: Sequence[float] | None = None,
) -> list[Hit]:
    """Reciprocal Rank Fusion, normalised to (0, 1]: sum_i w_i / (k + rank_i) over sum_i w_i / (k + 1).

    Each list is ranked by its own scores (ties by id, rank 1 first); a hit absent from a list gets
    nothing from it. The fused hit is the first list's copy carrying the fused score.
    """
    if weights is None:
        weights = [1.0] * len(ranked_lists)
    if len(weights) != len(ranked_lists):
        raise ValueError("rrf_fuse needs one weight per ranked list")
    if k < 0 or any(w < 0 for w in weights):
        raise ValueError("rrf_fuse needs k >= 0 and non-negative weights")
    ceiling = sum(w / (k + 1) for w in weights)
    totals: dict[str, float] = {}
    carriers: dict[str, Hit] = {}
    for hits, weight in zip(ranked_lists, weights, strict=True):
        for rank, hit in enumerate(_best_by_id(hits), start=1):
            totals[hit.id] = totals.get(hit.id, 0.0) + weight / (k + rank)
            carriers.setdefault(hit.id, hit)
    fused = [
        replace(carriers[hit_id], score=round(total / ceiling, SCORE_DIGITS) if ceiling > 0 else 0.0)
        for hit_id, total in totals.items()
    ]
    return sorted(fused, key=_rank_key)


def min_max(scores: Sequence[float]) -> list[float]:
    """Scores rescaled to [0, 1] by (s - min) / (max - min); all-equal scores become 1.0."""
    if not scores:
        return []
    low, high = min(scores), max(scores)
    if high - low <= 0:
        return [1.0] * len(scores)
    return [(s - low) / (high - low) for s in scores]


def relative_score_fuse(
    vector_hits: Sequence[Hit],
    keyword_hits: Sequence[Hit],
    *,
    vector_weight: float = 0.5,
    clear_cosine: float = CLEAR_COSINE,
    clear_keywords: float = CLEAR_KEYWORDS,
) -> list[Hit]:
    """Weaviate's relativeScoreFusion with absolute confidence: min-max normalise each list, scale it by
    list_confidence (its best score over the clear score, at most 1), then a weighted sum (missing = 0).

    vector_weight is clamped to [0, 1]; the keyword list gets 1 - vector_weight. Clear scores of 0 give
    plain relativeScoreFusion. The fused hit is the vector list's copy when the hit is in both, carrying
    the fused score.
    """
    weight = min(1.0, max(0.0, vector_weight))
    totals: dict[str, float] = {}
    carriers: dict[str, Hit] = {}
    for hits, list_weight, clear in (
        (vector_hits, weight, clear_cosine),
        (keyword_hits, 1.0 - weight, clear_keywords),
    ):
        unique = _best_by_id(hits)
        share = list_weight * list_confidence(unique, clear)
        for hit, norm in zip(unique, min_max([h.score for h in unique]), strict=True):
            totals[hit.id] = totals.get(hit.id, 0.0) + share * norm
            carriers.setdefault(hit.id, hit)
    fused = [replace(carriers[hit_id], score=round(total, SCORE_DIGITS)) for hit_id, total in totals.items()]
    return sorted(fused, key=_rank_key)


def list_confidence(hits: Sequence[Hit], clear: float) -> float:
    """How far a list's best absolute score goes towards a clear match: min(1, best / clear); 0 when empty.

    A clear score of 0 or less trusts every list fully (the fusions' plain relative behaviour).
    """
    if not hits:
        return 0.0
    if clear <= 0:
        return 1.0
    return min(1.0, max(0.0, max(hit.score for hit in hits)) / clear)


def _rrf_pair(vector_hits: Sequence[Hit], keyword_hits: Sequence[Hit]) -> list[Hit]:
    """RRF of the two lists, each list's weight scaled by its confidence (list_confidence)."""
    weights = [list_confidence(vector_hits, CLEAR_COSINE), list_confidence(keyword_hits, CLEAR_KEYWORDS)]
    fused = rrf_fuse([vector_hits, keyword_hits], weights=weights)  # normalised by these weights' ceiling
    scale = sum(weights) / len(weights)  # so that fully trusted lists give the unweighted ceiling
    return [replace(hit, score=round(hit.score * scale, SCORE_DIGITS)) for hit in fused]


Fusion = Callable[[Sequence[Hit], Sequence[Hit]], list[Hit]]
FUSIONS: dict[str, Fusion] = {"rrf": _rrf_pair, "relative_score": relative_score_fuse}


def fuse(name: str, vector_hits: Sequence[Hit], keyword_hits: Sequence[Hit]) -> list[Hit]:
    """Fuse the two lists with the fusion called name ("rrf" or "relative_score"), default weights."""
    try:
        fusion = FUSIONS[name]
    except KeyError:
        raise ValueError(f"unknown fusion {name!r}; known: {', '.join(FUSIONS)}") from None
    return fusion(vector_hits, keyword_hits)


FULL_CORPUS_CHUNKS = 100  # from this size on, a distinctive term's idf is about what BM25_HALF_SCORE assumes


def _best_idf(chunks: int) -> float:
    """Lucene idf of a term found in one chunk of a corpus of this many chunks."""
    return math.log(1 + (max(1, chunks) - 0.5) / 1.5)


def bm25_half_for(chunks: int) -> float:
    """normalise_bm25's half for a dataset of this many chunks: BM25_HALF_SCORE from FULL_CORPUS_CHUNKS on,
    and lower in proportion to the best possible idf below it. In a one-document dataset every idf is
    ln(1 + 0.5/1.5) ~ 0.29, so with the full-corpus half no match, however exact, would reach the
    threshold; scaled, an exact match there scores as it would in a large corpus
    (docs/storage.md#keyword-segments)."""
    if chunks >= FULL_CORPUS_CHUNKS:
        return BM25_HALF_SCORE
    return BM25_HALF_SCORE * _best_idf(chunks) / _best_idf(FULL_CORPUS_CHUNKS)


def normalise_bm25(scores: Sequence[float], *, half: float = BM25_HALF_SCORE) -> list[float]:
    """BM25 scores mapped to [0, 1) by saturation s / (s + half); 0 and negatives give 0.

    Why saturation rather than division by the best score or min-max: it is per hit (a hit's value does
    not depend on the other hits or on the limit), monotonic (order is kept) and absolute (a weak best
    match stays low, so a threshold means the same for every query). ``half`` is the raw score mapped
    to 0.5. With Lucene-style idf ``ln(1 + (N - df + .5) / (df + .5))`` one query term contributes
    about its idf per match in a chunk of average length: on zh_laws (12.7k chunks) a distinctive term
    (df ~ 100) gives ~4.8, one in a fifth of the chunks ~1.6, one in 40% ~0.9 and a near-stop-word
    (df ~ 10,000) ~0.2. half = 4 puts one distinctive-term match near 0.55, and the default threshold
    0.28 needs a raw score of ~1.6, so matches made only of very common words are dropped. Good
    multi-term matches score 10-13 raw (0.71-0.76).
    """
    if half <= 0:
        raise ValueError("normalise_bm25 needs half > 0")
    return [s / (s + half) if s > 0 else 0.0 for s in scores]
