"""The parts a model's answer left out (adapters/extractive/left_out.py), judged through the engine's port."""

from __future__ import annotations

from adapters.extractive.engine import ExtractiveEngine
from core.answering.left_out import left_out_text
from core.models import AnswerRequest
from core.record import SuppliedQuote
from tests.extractive.helpers import hit

LEAVE = hit(1, "工龄满 1 年不满 5 年：每年 10 天年假。试用期内不享有年假。", "年假制度.md")
DEADLINE = hit(
    2,
    "所有费用必须在费用发生之日起 30 天内通过报销系统提交报销单。超过 90 天的费用不再受理。",
    "费用报销.md",
    "报销截止期限",
)
COMPOUND = AnswerRequest(question="年假有几天？报销的截止期限是多久？", evidence=(LEAVE, DEADLINE), lang="zh")


async def test_a_part_whose_paragraph_the_answer_does_not_cite_is_quoted_from_it() -> None:
    """The answer cites the leave paragraph only: the deadline part is quoted from the reimbursement one."""
    quotes = await ExtractiveEngine().left_out(COMPOUND, [1])
    assert quotes and {quote.part for quote in quotes} == {"报销的截止期限是多久"}
    assert {quote.source for quote in quotes} == {2}
    assert any("30 天内" in quote.sentence for quote in quotes)


async def test_an_answer_citing_every_parts_paragraph_leaves_nothing_out() -> None:
    """Both paragraphs cited: nothing to add; no paragraph cited: both parts are quoted, each from its own."""
    engine = ExtractiveEngine()
    assert await engine.left_out(COMPOUND, [1, 2]) == ()
    quotes = await engine.left_out(COMPOUND, [])
    assert {(quote.part, quote.source) for quote in quotes} == {
        ("年假有几天", 1),
        ("报销的截止期限是多久", 2),
    }


async def test_a_part_no_paragraph_supports_is_never_quoted() -> None:
    """A part the evidence does not cover (the team-building budget) is left to the uncertainty notice."""
    request = AnswerRequest(question="年假有几天？团建预算是多少？", evidence=(LEAVE, DEADLINE), lang="zh")
    assert await ExtractiveEngine().left_out(request, [1]) == ()


async def test_a_bridge_part_is_answered_only_when_its_second_paragraph_is_cited() -> None:
    """Citing the film paragraph (the first hop) leaves the actress's office out; citing hers answers it."""
    from tests.extractive.test_assess_multihop import KISS, KISS_QUESTION, TEMPLE, TREASURER

    request = AnswerRequest(question=KISS_QUESTION, evidence=(KISS, TREASURER, TEMPLE), lang="en")
    engine = ExtractiveEngine()
    quotes = await engine.left_out(request, [1])
    assert quotes and {quote.source for quote in quotes} == {3}
    assert any("Chief of Protocol" in quote.sentence for quote in quotes)
    assert await engine.left_out(request, [3]) == ()


def test_the_quotes_are_worded_under_a_line_per_part_in_the_answers_language() -> None:
    """One heading line per part, its sentences as a list with their markers; nothing for no quotes."""
    quotes = (
        SuppliedQuote("报销的截止期限是多久", "费用须在 30 天内提交。", 2),
        SuppliedQuote("报销的截止期限是多久", "超过 90 天不再受理。", 2),
    )
    assert left_out_text(quotes, "zh") == (
        "上面的回答没有涉及「报销的截止期限是多久」，资料中的相关内容：\n- 费用须在 30 天内提交。 [2]\n"
        "- 超过 90 天不再受理。 [2]"
    )
    english = left_out_text((SuppliedQuote("who leads it", "Lin leads it.", 1),), "en")
    assert english == 'The answer above leaves out "who leads it"; the sources say:\n- Lin leads it. [1]'
    assert left_out_text((), "en") == ""
    long_part = "how long " + "and why " * 20
    heading = left_out_text((SuppliedQuote(long_part, "Lin leads it.", 1),), "en").splitlines()[0]
    assert '"how long and why' in heading and '…"' in heading and len(heading) < 110
