"""Complexity features and the rule score on Chinese, English and mixed questions.

See docs/design.md#rule-features-and-the-rule-score.
"""

from __future__ import annotations

import pytest

from core.retrieval.complexity import FEATURE_NAMES, ComplexityFeatures, extract_features, rule_score


def test_chinese_comparison_markers_and_place_entities_are_found() -> None:
    """相比/更/区别-style markers count as comparison, and jieba place names count as entities."""
    features = extract_features("北京和上海相比,哪个城市的人口更多?")
    assert features.comparison_markers >= 3
    assert {"北京", "上海"} <= set(features.entity_names)


def test_chinese_logical_connectors_are_counted() -> None:
    """首先/然后 and 如果/则 are logical connectors; a marker inside a longer word (更新) is not a comparison."""
    features = extract_features("首先更新文档,然后如果失败则重试")
    assert features.logical_connectors == 4
    assert features.comparison_markers == 0


def test_chinese_relative_clause_is_a_bridge_and_quoted_titles_are_entities() -> None:
    """出演《X》…的女演员 reaches an entity through another: one bridge; the book-title quote is an entity."""
    features = extract_features("出演《吻与告白》中科利斯·阿彻的女演员后来担任过什么政府职务?")
    assert features.bridge_entities == 1
    assert "吻与告白" in features.entity_names


def test_english_bridge_question_has_a_relative_pronoun_bridge_and_proper_nouns() -> None:
    """'the woman who portrayed Corliss Archer' is a bridge; proper-noun runs are entities, the question word is not."""
    features = extract_features(
        "What government position was held by the woman who portrayed Corliss Archer in the film Kiss and Tell?"
    )
    assert features.bridge_entities == 1
    assert "Corliss Archer" in features.entity_names and "What" not in features.entity_names
    assert features.entities >= 2


def test_english_comparison_question_counts_its_markers() -> None:
    """'Which ... first, A or B' carries comparison markers and two proper-noun entities."""
    features = extract_features("Which magazine was started first, Arthur's Magazine or First for Women?")
    assert features.comparison_markers >= 2
    assert "Arthur's Magazine" in features.entity_names


def test_mixed_language_question_finds_markers_in_both_languages() -> None:
    """A mixed question finds 区别 and 'versus' and both quoted terms."""
    features = extract_features("「BM25」versus “dense retrieval”在召回上的区别是什么?")
    assert {"区别", "versus"} <= set(features.markers)
    assert {"BM25", "dense retrieval"} <= set(features.entity_names)


def test_domain_terms_are_entities() -> None:
    """Law names (…法) and caller-supplied domain terms count as entities."""
    features = extract_features("行政复议法规定的期限", domain_terms={"期限"})
    assert "行政复议法" in features.entity_names
    plain = extract_features("what does the refund policy say", domain_terms={"refund policy"})
    assert plain.entity_names == ("refund policy",)


def test_a_simple_question_scores_low_and_a_compound_comparison_scores_high() -> None:
    """A one-fact question scores under 0.15; a comparison with connectors scores well above 0.5."""
    simple = rule_score(extract_features("行政复议的申请期限是多久?"))
    compound = rule_score(
        extract_features("比较《行政复议法》和《行政诉讼法》的申请期限有什么区别,如果超过期限之后又该怎么办")
    )
    assert simple <= 0.15 < 0.5 < compound


def test_token_length_is_measured() -> None:
    """The token feature grows with the question's length."""
    assert extract_features("期限 " * 40).tokens > extract_features("期限").tokens > 0


@pytest.mark.parametrize(
    ("features", "expected"),
    [
        (ComplexityFeatures(0, 0, 0, 0, 0), 0.0),
        (ComplexityFeatures(2, 2, 1, 2, 10), 0.75),
        (ComplexityFeatures(1, 0, 1, 0, 10), 0.15),
        (ComplexityFeatures(9, 9, 9, 9, 999), 1.0),
        (ComplexityFeatures(0, 0, 4, 0, 50), 0.25),
    ],
)
def test_rule_score_follows_the_documented_weights(features: ComplexityFeatures, expected: float) -> None:
    """The score is the documented weighted sum of saturated signals, within [0, 1]."""
    assert rule_score(features) == pytest.approx(expected)


def test_as_vector_and_as_dict_carry_the_five_features_in_order() -> None:
    """The classifier gets five numbers in FEATURE_NAMES order."""
    features = ComplexityFeatures(1, 2, 3, 4, 5)
    assert features.as_vector() == (1.0, 2.0, 3.0, 4.0, 5.0)
    assert list(features.as_dict()) == list(FEATURE_NAMES)
