"""The uncertainty notice is worded by what is missing (the named gap, else the route's wording), and given only when something is."""

from __future__ import annotations

from core.answering.answer import MISSING_IN_NOTICE, uncertainty_notice
from core.commands import Ask
from core.models import Assessment, ConversationScope
from core.record import Record
from tests.fakes import FakeEngine, FakeKnowledgeBase, InMemoryConversationStore
from tests.pipeline.conftest import KEY, looped_pipeline


def test_a_named_gap_is_quoted_in_the_users_language() -> None:
    """The gap the assessment named becomes the notice, in Chinese or English, its end punctuation merged."""
    assert (
        uncertainty_notice("zh", missing="缺少关于「婚假有几天」的资料。", multi_step=True)
        == "注意：缺少关于「婚假有几天」的资料，以上结论仅供参考。"
    )
    english = uncertainty_notice(
        "en", missing='the sources lack the key facts of "parental leave"', multi_step=False
    )
    assert (
        english
        == 'Note: the sources lack the key facts of "parental leave"; treat the answer above as for reference only.'
    )


def test_without_a_gap_only_the_loop_speaks_of_several_steps() -> None:
    """No gap named: a looped question keeps the multi-step wording, a one-search question never gets it."""
    assert "多步推理" in uncertainty_notice("zh", multi_step=True)
    single = uncertainty_notice("zh", multi_step=False)
    assert "多步推理" not in single and single.startswith("注意：") and "仅供参考" in single
    assert "several steps" not in uncertainty_notice("en", multi_step=False)


def test_a_long_or_multiline_gap_is_one_bounded_line() -> None:
    """A model-written gap of any length becomes one line of at most MISSING_IN_NOTICE characters."""
    notice = uncertainty_notice("en", missing="line one\n\nline two " + "x" * 500)
    gap = notice.removeprefix("Note: ").split("; treat", 1)[0]
    assert "\n" not in notice and len(gap) == MISSING_IN_NOTICE and gap.endswith("…")


async def test_partial_support_gets_no_notice_and_a_missing_part_does() -> None:
    """Through the pipeline with the loop: a last verdict that is insufficient only in degree (partial) ends
    the answer without a notice; the same gap judged missing gets the notice naming it."""
    engine, kb, store = FakeEngine(), FakeKnowledgeBase(), InMemoryConversationStore()
    kb.add("p1", "劳动争议申请仲裁的时效期间为一年。", document="劳动争议调解仲裁法")
    pipeline = looped_pipeline(store, kb, engine, unsupported_claims="off")
    scope = ConversationScope(("ds",), retrieval_mode="multi")
    notices = []
    for partial in (True, False):
        engine.assessments.append(
            Assessment(sufficient=False, missing="缺少关于「辞退」的资料", partial=partial)
        )
        engine.answers.append(["劳动争议申请仲裁的时效期间为一年 [1]。"])
        record = await pipeline.answer(Ask(KEY, "被辞退多久内可以申请仲裁？", scope))
        assert isinstance(record, Record) and record.details.trace is not None
        assert record.details.trace.partial is partial
        notices.append(record.details.notice)
    assert notices[0] is None
    assert notices[1] == "注意：缺少关于「辞退」的资料，以上结论仅供参考。"
