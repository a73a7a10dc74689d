"""The claim check (core/answering/claims.py): numbers and names no source holds, and the policies."""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.answering.claims import check_claims, normalise_numbers, present_claims, unsupported_claims
from core.models import Hit, Location
from core.record import UnsupportedClaim

LAW = Hit(
    "p1",
    "第二十条 公民可以自知道该行政行为之日起六十日内提出行政复议申请。逾期罚款 1,500 元。",
    1.0,
    "laws",
    "d1",
    "行政复议法",
    "第二章",
)
GUIDE = Hit(
    "p2",
    "Rollbacks use make rollback and take five minutes, says Dana Whitfield.",
    1.0,
    "docs",
    "d2",
    "Ops guide",
)


def _claims(answer: str, *evidence: Hit, question: str = "") -> list[tuple[str, str]]:
    return [(claim.text, claim.kind) for claim in unsupported_claims(answer, evidence, question=question)]


def test_numbers_are_compared_by_value_across_chinese_and_arabic_numerals() -> None:
    """60 日 is the paragraph's 六十日, 一千五百元 its 1,500 元, 第二十条 its article; 九十日 is in no source."""
    assert _claims("应在60日内提出 [1]，逾期罚款一千五百元，依据第二十条。", LAW) == []
    assert _claims("应在九十日内提出 [1]。", LAW) == [("九十日", "number")]
    assert normalise_numbers("罚款一千五百元, 1,500 元, five minutes") == "罚款1500元, 1500 元, 5 minutes"


def test_names_no_source_holds_are_claims_and_held_ones_are_not() -> None:
    """A capitalised run not opening the sentence, a quoted title: held by the guide, or not."""
    assert _claims("Ask Dana Whitfield before a rollback [1].", GUIDE) == []
    assert _claims("Rollbacks are approved by Morgan Lee [1].", GUIDE) == [("Morgan Lee", "name")]
    assert _claims("依照《劳动法》提出 [1]。", LAW) == [("劳动法", "name")]


def test_markers_list_numbers_paragraph_numbers_and_the_questions_own_figures_are_no_claims() -> None:
    """[2], "1." list items, "编号:3" and a year the question asks about are not the answer's claims."""
    answer = "1. 六十日内 [2]\n2. 编号:3\n2024 年也是六十日 [1]。"
    assert _claims(answer, LAW, question="2024 年的复议期限是多久?") == []
    assert _claims(answer, LAW) == [("2024 年", "number")]


def test_common_words_made_of_numerals_are_not_numbers() -> None:
    """千万 ("by all means"), 万一 ("in case"), 一一 ("one by one"), 一个 ("a"), 一个月 ("a month") state no
    figure; "16个小时" is shown with its whole unit."""
    assert _claims("千万不要一一列出。万一有一个问题，一个月内、六十日内提出 [1]。", LAW) == []
    assert _claims("一个月最多能加16个小时。", LAW) == [("16个小时", "number")]


def test_the_mark_policy_lists_the_claims_under_the_answer_and_a_core_claim_calls_for_the_notice() -> None:
    """mark: the answer is kept and a ⚠ line names the claims; the first sentence unsupported → notice gap."""
    check = check_claims("应在九十日内提出 [1]。其余照旧。", [LAW], question="", policy="mark", lang="zh")
    assert (
        check.answer == "应在九十日内提出 [1]。其余照旧。\n\n⚠ 资料中找不到依据：「九十日」（请核实后再使用）"
    )
    assert check.appended == "⚠ 资料中找不到依据：「九十日」（请核实后再使用）"
    assert check.missing == "回答中的「九十日」在资料中找不到依据"
    later = check_claims("可以申请复议 [1]。期限为九十日。", [LAW], question="", policy="mark", lang="zh")
    assert later.claims and later.missing == ""


def test_drop_sentence_removes_what_states_the_claim_and_keeps_the_rest() -> None:
    """drop_sentence: the sentence with 3 goes, the others and their line breaks stay, and it is said."""
    answer = "Rollbacks take 5 minutes [1].\nThey need 3 approvals [1]. Ask Dana Whitfield."
    check = check_claims(answer, [GUIDE], question="", policy="drop_sentence", lang="en")
    assert check.answer.startswith("Rollbacks take 5 minutes [1].\n Ask Dana Whitfield.")
    assert check.answer.endswith("⚠ Removed what the sources do not state: “3”")


@pytest.mark.parametrize(("policy", "claims", "missing"), [("notice_only", 1, True), ("off", 0, False)])
def test_notice_only_keeps_the_text_and_off_checks_nothing(policy: str, claims: int, missing: bool) -> None:
    """notice_only: text unchanged, claims kept, the notice due; off: nothing at all."""
    answer = "可以申请复议 [1]。期限为九十日。"
    check = check_claims(answer, [LAW], question="", policy=policy, lang="zh")  # type: ignore[arg-type]
    assert (check.answer, len(check.claims), bool(check.missing), check.appended) == (
        answer,
        claims,
        missing,
        "",
    )


def test_no_claims_leave_the_answer_as_it_is() -> None:
    """Without claims present_claims changes nothing."""
    assert present_claims("好。", (), policy="mark", lang="zh").answer == "好。"
    assert (
        present_claims("好。", (UnsupportedClaim("3", "number", "好。"),), policy="off", lang="zh").claims
        == ()
    )


def test_a_sentence_quoted_from_a_paragraph_states_nothing_the_paragraph_does_not() -> None:
    """Verbatim quotes give the values their paragraph gives ("9300万年" with its 万, "98" before 一条), and a
    question part quoted back in other words ("Are Ada Byron both mathematicians") names nothing new."""
    fossil = Hit("f", "它生活在约9300万年前至7000万年前。目前只设有98一条路线。", 1.0, "d", "x", "化石")
    assert _claims("它生活在约9300万年前至7000万年前。目前只设有98一条路线。 [1]", fossil) == []
    question = "Are Ada Byron and Mary Somerville both mathematicians?"
    assert _claims("Could not confirm “Are Ada Byron both mathematicians”.", GUIDE, question=question) == []


def test_the_article_a_chunk_continues_is_no_unsupported_claim() -> None:
    """An answer naming 第七十八条 from a chunk that continues it (its text starts at item 六) is supported by
    that chunk; without the article recorded, 第七十八条 is in no source."""
    rest = Hit("p3", "（六）对国家和社会有其他重大贡献的。", 1.0, "laws", "d3", "刑法", "第六节 减刑")
    continued = replace(rest, location=Location(within="第七十八条"))
    assert _claims("依据第七十八条,有其他重大贡献的应当减刑 [1]。", continued) == []
    assert _claims("依据第七十八条,有其他重大贡献的应当减刑 [1]。", rest) == [("第七十八条", "number")]
