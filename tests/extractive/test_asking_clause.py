"""A quantity asked in one clause of a part is about that clause, not the asker's situation (judging/assess.py)."""

from __future__ import annotations

from adapters.extractive.judging.assess import DEFAULT_COVERAGE_THRESHOLD, judge_parts
from adapters.extractive.language.quantities import asking_clause
from tests.extractive.helpers import hit

DISMISSED = "被单位辞退了，多久之内可以去申请劳动仲裁？"
SCOPE = hit(
    1,
    "第二条 用人单位与劳动者发生的下列劳动争议，适用本法：因除名、辞退和辞职、离职发生的争议。劳动者可以向劳动争议仲裁委员会申请仲裁。",
    "劳动争议调解仲裁法",
)
TIME_LIMIT = hit(
    2,
    "第二十七条 劳动争议申请仲裁的时效期间为一年。仲裁时效期间从当事人知道或者应当知道其权利被侵害之日起计算。",
    "劳动争议调解仲裁法",
)
COMPENSATION = hit(3, "第四十七条 用人单位应当在解除劳动合同后三十日内向劳动者支付经济补偿。", "劳动合同法")


def _covered(question: str, *evidence: object) -> list[bool]:
    supports = judge_parts(question, list(evidence), threshold=DEFAULT_COVERAGE_THRESHOLD)  # type: ignore[arg-type]
    return [support.covered for support in supports]


def test_the_asking_clause_is_the_one_holding_the_question_words() -> None:
    """The clause with 多久 is what the number is about; a one-clause part is itself."""
    assert asking_clause("被单位辞退了，多久之内可以去申请劳动仲裁") == "多久之内可以去申请劳动仲裁"
    assert asking_clause("子女教育每月可以扣多少钱") == "子女教育每月可以扣多少钱"
    assert asking_clause("被辞退了，可以申请仲裁吗") == "被辞退了，可以申请仲裁吗"  # asks for no quantity


def test_a_sentence_stating_the_asked_duration_about_the_asking_clause_covers_the_part() -> None:
    """The scope article has the situation's words but no duration; the time-limit article states 一年 about
    申请劳动仲裁 without the situation's words (干了五年, 辞退): together in the evidence, the part is covered
    and the sentence quoted."""
    question = "我在这家单位干了五年，上个月突然被公司辞退了，多久之内可以去申请劳动仲裁？"
    assert _covered(question, SCOPE) == [False]
    [support] = judge_parts(question, [SCOPE, TIME_LIMIT], threshold=DEFAULT_COVERAGE_THRESHOLD)
    assert support.covered
    assert any("时效期间为一年" in sentence.text for sentence in support.quoted)


def test_a_duration_about_something_else_does_not_cover_the_part() -> None:
    """三十日内 is about paying compensation, not about applying for arbitration: still not covered."""
    assert _covered(DISMISSED, SCOPE, COMPENSATION) == [False]
