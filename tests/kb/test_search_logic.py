"""Pure search logic: request validation, tiers, merging embedding groups, blend fusions, BM25 scaling.

See docs/design.md#search-modes and docs/design.md#query-length-tiers.
"""

from __future__ import annotations

import math

import pytest

from core.errors import InvalidInput
from core.knowledge.search import (
    BM25_HALF_SCORE,
    CLEAR_COSINE,
    FUSIONS,
    SearchTiers,
    bm25_half_for,
    build_search_request,
    fuse,
    list_confidence,
    merge_ranked,
    min_max,
    normalise_bm25,
    relative_score_fuse,
    rrf_fuse,
    tier_for,
)
from core.models import Hit


def hit(hit_id: str, score: float, content: str = "") -> Hit:
    return Hit(
        id=hit_id,
        content=content or f"text of {hit_id}",
        score=score,
        dataset="ds",
        document_id=f"doc-{hit_id}",
        document_name=f"Doc {hit_id}",
    )


def ids(hits: list[Hit]) -> list[str]:
    return [h.id for h in hits]


# --- build_search_request -------------------------------------------------------------------------


@pytest.mark.parametrize("query", ["", "   ", "\n\t\u3000"])
def test_blank_query_is_rejected_in_both_languages(query: str) -> None:
    """A blank or whitespace-only query raises InvalidInput with the documented Chinese message."""
    with pytest.raises(InvalidInput) as caught:
        build_search_request(query, ["laws"])
    assert caught.value.message("zh") == "检索问题不能为空"
    assert caught.value.message("en") == "The search query must not be empty"


def test_unknown_mode_lists_the_valid_modes() -> None:
    """An unknown mode raises InvalidInput naming the mode and every valid mode."""
    with pytest.raises(InvalidInput) as caught:
        build_search_request("期限", ["laws"], mode="fuzzy")
    for text in (caught.value.message("en"), caught.value.message("zh")):
        assert "fuzzy" in text
        assert "embedding" in text and "keywords" in text and "blend" in text


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (None, "blend"),
        ("", "blend"),
        ("embedding", "embedding"),
        (" Keywords ", "keywords"),
        ("BLEND", "blend"),
    ],
)
def test_mode_is_normalised_and_defaults(given: str | None, expected: str) -> None:
    """Mode names ignore case and spaces; a missing mode takes the default."""
    assert build_search_request("q", ["d"], mode=given).mode == expected


def test_default_mode_is_configurable() -> None:
    """default_mode is used when no mode is given, and only then."""
    assert build_search_request("q", ["d"], default_mode="keywords").mode == "keywords"
    assert build_search_request("q", ["d"], mode="embedding", default_mode="keywords").mode == "embedding"


@pytest.mark.parametrize(
    ("given", "expected"), [(None, 0.0), (-0.5, 0.0), (math.nan, 0.0), (0.0, 0.0), (0.3, 0.3), (1.7, 1.7)]
)
def test_threshold_is_never_negative(given: float | None, expected: float) -> None:
    """A missing, NaN or negative threshold becomes 0; others are kept."""
    assert build_search_request("q", ["d"], threshold=given).threshold == expected


@pytest.mark.parametrize(
    ("given", "expected"), [(None, 10), (0, 1), (-3, 1), (1, 1), (7, 7), (50, 50), (51, 50), (1000, 50)]
)
def test_limit_defaults_to_10_and_clamps_to_1_50(given: int | None, expected: int) -> None:
    """The limit defaults to 10 and is clamped into 1..50."""
    assert build_search_request("q", ["d"], limit=given).limit == expected


def test_datasets_are_deduplicated_in_order_and_query_trimmed() -> None:
    """Datasets keep their first-seen order without duplicates or blanks; the query is trimmed."""
    request = build_search_request("  行政复议期限 ", ["b", "a", "b", " ", "a", "c"])
    assert request.datasets == ("b", "a", "c")
    assert request.query == "行政复议期限"


def test_no_datasets_is_a_valid_request() -> None:
    """An empty dataset list is valid (the caller returns no hits without calling anything)."""
    assert build_search_request("q", []).datasets == ()


# --- tiers ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("JVM", (20, 0.25)),
        ("abcd", (20, 0.25)),
        ("行政复议", (20, 0.25)),
        (" a b\tc d ", (20, 0.25)),
        ("abcde", (12, 0.28)),
        ("行政复议期限", (12, 0.28)),
        ("x" * 12, (12, 0.28)),
        ("x x x x x x x x x x x x", (12, 0.28)),
        ("x" * 13, (8, 0.28)),
        ("申请行政复议的期限是多久", (12, 0.28)),
        ("申请行政复议的期限是多少天", (8, 0.28)),
    ],
)
def test_tiers_switch_at_4_and_12_compact_characters(query: str, expected: tuple[int, float]) -> None:
    """<= 4 characters (whitespace ignored) is short, 5..12 medium, 13+ long, as documented."""
    assert tier_for(query, SearchTiers()) == expected


def test_tiers_are_configurable() -> None:
    """Every tier boundary, limit and threshold comes from the SearchTiers given."""
    tiers = SearchTiers(
        short_length=2, topk_short=5, topk_medium=4, topk_long=3, min_score_short=0.1, min_score_default=0.5
    )
    assert tier_for("ab", tiers) == (5, 0.1)
    assert tier_for("abc", tiers) == (4, 0.5)
    assert tier_for("a" * 13, tiers) == (3, 0.5)
    assert tier_for("abcdef", SearchTiers(medium_length=5)) == (8, 0.28)


# --- merge across embedding groups -----------------------------------------------------------------


def test_merge_orders_by_score_then_id_and_cuts_to_limit() -> None:
    """Groups merge by score descending, equal scores by id ascending, then the limit applies."""
    first = [hit("b", 0.9), hit("e", 0.5)]
    second = [hit("d", 0.7), hit("a", 0.9), hit("c", 0.7)]
    assert ids(merge_ranked([first, second], limit=4)) == ["a", "b", "c", "d"]
    assert ids(merge_ranked([first, second], limit=10)) == ["a", "b", "c", "d", "e"]
    assert merge_ranked([first, second], limit=0) == []
    assert merge_ranked([], limit=5) == []


def test_merge_keeps_the_best_copy_of_a_repeated_id() -> None:
    """A paragraph returned by two groups appears once, with its higher score."""
    merged = merge_ranked([[hit("a", 0.4)], [hit("a", 0.8), hit("b", 0.6)]], limit=10)
    assert [(h.id, h.score) for h in merged] == [("a", 0.8), ("b", 0.6)]


# --- RRF ------------------------------------------------------------------------------------------


def test_rrf_matches_hand_computed_scores_and_order() -> None:
    """RRF with k=60 sums 1/(60+rank) per list, divided by the best possible 2/61."""
    vector = [hit("A", 0.9), hit("B", 0.8), hit("C", 0.7)]
    keyword = [hit("C", 10.0), hit("A", 5.0), hit("D", 1.0)]
    fused = rrf_fuse([vector, keyword])
    assert ids(fused) == ["A", "C", "B", "D"]
    expected = {"A": 1 / 61 + 1 / 62, "C": 1 / 63 + 1 / 61, "B": 1 / 62, "D": 1 / 63}
    for h in fused:
        assert h.score == pytest.approx(expected[h.id] / (2 / 61))


def test_rrf_ranks_by_each_lists_scores_not_input_order() -> None:
    """Each list is ranked by its own scores, so unsorted input gives the same result."""
    vector = [hit("C", 0.7), hit("A", 0.9), hit("B", 0.8)]
    keyword = [hit("D", 1.0), hit("A", 5.0), hit("C", 10.0)]
    assert ids(rrf_fuse([vector, keyword])) == ["A", "C", "B", "D"]


def test_rrf_ties_are_broken_by_id() -> None:
    """Hits with equal fused scores come out in id order whatever the input order."""
    fused = rrf_fuse([[hit("b", 0.9), hit("a", 0.8)], [hit("a", 3.0), hit("b", 2.0)]])
    assert ids(fused) == ["a", "b"]
    assert fused[0].score == fused[1].score


def test_rrf_weights_and_k() -> None:
    """A zero-weighted list contributes nothing; k changes how fast ranks decay; top-everywhere is 1.0."""
    vector = [hit("P", 0.9), hit("Q", 0.8), hit("R", 0.7)]
    keyword = [hit("R", 9.0), hit("S", 8.0)]
    assert ids(rrf_fuse([vector, keyword])) == ["R", "P", "Q", "S"]
    assert ids(rrf_fuse([vector, keyword], weights=[0.0, 1.0])) == ["R", "S", "P", "Q"]
    by_k0 = {h.id: h.score for h in rrf_fuse([vector, keyword], k=0)}
    assert by_k0["R"] == pytest.approx((1 / 3 + 1 / 1) / 2)
    assert rrf_fuse([[hit("x", 0.1)], [hit("x", 0.2)]])[0].score == pytest.approx(1.0)


def test_rrf_rejects_mismatched_weights() -> None:
    """One weight per list is required, and weights must not be negative."""
    with pytest.raises(ValueError):
        rrf_fuse([[hit("a", 1.0)]], weights=[1.0, 2.0])
    with pytest.raises(ValueError):
        rrf_fuse([[hit("a", 1.0)]], weights=[-1.0])


def test_rrf_keeps_the_first_lists_content_with_the_fused_score() -> None:
    """The fused hit is the first list's copy (content, metadata) carrying the fused score."""
    fused = rrf_fuse([[hit("a", 0.5, content="vector copy")], [hit("a", 7.0, content="keyword copy")]])
    assert fused[0].content == "vector copy"
    assert fused[0].document_name == "Doc a"
    assert fused[0].score == pytest.approx(1.0)


# --- relative score fusion -------------------------------------------------------------------------


def test_min_max_scales_to_unit_interval() -> None:
    """min-max maps the lowest to 0 and the highest to 1; equal scores all become 1."""
    assert min_max([0.5, 0.9, 0.7]) == pytest.approx([0.0, 1.0, 0.5])
    assert min_max([3.0, 3.0]) == [1.0, 1.0]
    assert min_max([]) == []


@pytest.mark.parametrize(
    ("weight", "expected"),
    [(0.5, ["A", "C", "B", "D"]), (0.8, ["A", "B", "C", "D"]), (0.2, ["C", "D", "A", "B"])],
)
def test_relative_score_fusion_hand_computed(weight: float, expected: list[str]) -> None:
    """Normalised vector (A1 B.5 C0) and keyword (C1 D.5 A0) scores are mixed by the weight."""
    vector = [hit("A", 0.9), hit("B", 0.7), hit("C", 0.5)]
    keyword = [hit("C", 12.0), hit("D", 8.0), hit("A", 4.0)]
    fused = relative_score_fuse(vector, keyword, vector_weight=weight)
    assert ids(fused) == expected
    scores = {h.id: h.score for h in fused}
    assert scores["A"] == pytest.approx(weight)
    assert scores["B"] == pytest.approx(weight * 0.5)
    assert scores["C"] == pytest.approx(1 - weight)
    assert scores["D"] == pytest.approx((1 - weight) * 0.5)


def test_relative_score_fusion_edge_cases() -> None:
    """Empty lists fuse to nothing; a lone hit keeps its absolute strength; weights clamp to [0, 1]."""
    assert relative_score_fuse([], []) == []
    only = relative_score_fuse([hit("a", 0.3)], [])
    assert [(h.id, h.score) for h in only] == [("a", pytest.approx(0.5 * 0.3 / CLEAR_COSINE))]
    clamped = relative_score_fuse([hit("a", 0.6)], [hit("b", 2.0)], vector_weight=3.0)
    assert [(h.id, h.score) for h in clamped] == [("a", 1.0), ("b", 0.0)]
    plain = relative_score_fuse([hit("a", 0.01)], [], clear_cosine=0, clear_keywords=0)
    assert [(h.id, h.score) for h in plain] == [("a", 0.5)]


def test_a_hit_that_matches_nothing_never_scores_like_the_best_match() -> None:
    """A lone vector hit at cosine 0.01 fuses near 0, not to 0.5; a weak vector list's top cannot tie the
    only document whose words match (the one a keyword search found clearly)."""
    [lone] = relative_score_fuse([hit("unrelated", 0.01)], [])
    assert lone.score < 0.02
    vector = [hit("unrelated", 0.12), hit("worded", 0.10)]
    keyword = [hit("worded", 0.62)]
    fused = {h.id: h.score for h in relative_score_fuse(vector, keyword)}
    assert fused["worded"] == pytest.approx(0.5) and fused["unrelated"] == pytest.approx(0.12)


def test_list_confidence_is_the_best_score_over_the_clear_score() -> None:
    """min(1, best / clear); an empty list has none, a clear score of 0 trusts fully."""
    assert list_confidence([hit("a", 0.2), hit("b", 0.1)], 0.5) == pytest.approx(0.4)
    assert list_confidence([hit("a", 0.9)], 0.5) == 1.0
    assert list_confidence([], 0.5) == 0.0
    assert list_confidence([hit("a", 0.01)], 0.0) == 1.0


def test_rrf_in_blend_scales_each_list_by_its_confidence() -> None:
    """The RRF choice of blend keeps the same absolute measure: a lone weak hit is not worth half."""
    [lone] = fuse("rrf", [hit("a", 0.05)], [])
    assert lone.score == pytest.approx(0.5 * 0.05 / CLEAR_COSINE)
    [both] = fuse("rrf", [hit("a", 0.9)], [hit("a", 0.9)])
    assert both.score == pytest.approx(1.0)


def test_relative_score_fusion_keeps_vector_content() -> None:
    """A hit in both lists keeps the vector list's copy and carries the fused score."""
    fused = relative_score_fuse([hit("a", 0.5, content="v")], [hit("a", 9.0, content="k")])
    assert (fused[0].content, fused[0].score) == ("v", pytest.approx(1.0))


def test_fusions_are_switchable_by_name() -> None:
    """fuse() dispatches to either fusion by name and rejects unknown names."""
    vector = [hit("A", 0.9), hit("B", 0.7)]
    keyword = [hit("B", 3.0), hit("C", 1.0)]
    assert set(FUSIONS) == {"rrf", "relative_score"}
    assert fuse("rrf", vector, keyword) == rrf_fuse([vector, keyword])
    assert fuse("relative_score", vector, keyword) == relative_score_fuse(vector, keyword)
    with pytest.raises(ValueError, match="rrf"):
        fuse("sum", vector, keyword)


# --- BM25 normaliser -------------------------------------------------------------------------------


def test_bm25_normaliser_properties() -> None:
    """Scores map into [0, 1), keep their order, 0 and negatives give 0, and `half` maps to 0.5."""
    raw = [0.0, -1.0, 0.5, 4.0, 12.7, 40.0, 1e6]
    normalised = normalise_bm25(raw)
    assert normalised[0] == 0.0 and normalised[1] == 0.0
    assert all(0.0 <= s < 1.0 for s in normalised)
    assert normalised[2:] == sorted(normalised[2:])
    assert normalised[3] == pytest.approx(0.5)
    assert normalise_bm25([3.0], half=3.0) == [pytest.approx(0.5)]


def test_bm25_normaliser_is_per_hit() -> None:
    """A hit's normalised score does not depend on the other scores in the list (unlike max-scaling)."""
    assert normalise_bm25([6.0, 2.0])[1] == normalise_bm25([2.0])[0] == normalise_bm25([100.0, 2.0])[1]
    with pytest.raises(ValueError):
        normalise_bm25([1.0], half=0.0)


def test_the_bm25_saturation_point_is_lower_only_for_small_datasets() -> None:
    """From 100 chunks on the calibrated half (4.0) is kept; below, it falls with the best possible idf,
    so one document's exact match (idf ~0.29) is not cut by the threshold."""
    assert bm25_half_for(100) == bm25_half_for(12_676) == BM25_HALF_SCORE
    sizes = [1, 2, 3, 10, 50, 99, 100]
    halves = [bm25_half_for(n) for n in sizes]
    assert halves == sorted(halves) and halves[0] == pytest.approx(4.0 * 0.2877 / 4.2096, rel=1e-3)
    exact_match_in_one_document = 0.2877 * 0.55  # idf times a typical tf part
    assert normalise_bm25([exact_match_in_one_document], half=bm25_half_for(1))[0] > 0.28
