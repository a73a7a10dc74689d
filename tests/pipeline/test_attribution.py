"""Attribution (core/answering/attribution.py): each answer sentence tied to the paragraph that supports it."""

from __future__ import annotations

from collections.abc import Sequence

from core.answering.attribution import attribute
from core.events import Done
from core.models import Hit
from tests.pipeline.conftest import build_harness

LEAVE = Hit(
    "p1", "员工每年享有 12 天带薪病假，病假期间工资照常发放。", 1.0, "hr", "d1", "病假与其他假期", "病假"
)
EXPENSES = Hit(
    "p2",
    "所有费用必须在费用发生之日起 30 天内通过「星河报销」系统提交报销单。",
    1.0,
    "hr",
    "d2",
    "费用报销",
    "报销截止期限",
)
ROLLBACK = Hit(
    "p3", "Rollbacks use make rollback and take five minutes.", 1.0, "docs", "d3", "Ops guide", "Rollback"
)
EVIDENCE = [LEAVE, EXPENSES, ROLLBACK]


def _how(answer: str) -> tuple[str, list[tuple[int, str]]]:
    text, notes = attribute(answer, EVIDENCE)
    return text, [(note.source, note.how) for note in notes]


def test_a_marker_pointing_at_a_paragraph_that_does_not_support_the_sentence_is_corrected() -> None:
    """ "每年 12 天带薪病假 [2]": paragraph 2 is about expenses, paragraph 1 states it; the marker becomes [1]."""
    assert _how("员工每年有 12 天带薪病假[2]。") == ("员工每年有 12 天带薪病假[1]。", [(1, "corrected")])


def test_a_supported_sentence_without_a_marker_gets_one_and_a_right_marker_is_kept() -> None:
    """No marker on the expenses sentence: [2] is added; the sick-leave sentence keeps its own [1]."""
    text, notes = _how("病假期间工资照常发放[1]。报销单须在 30 天内通过星河报销系统提交。")
    assert text == "病假期间工资照常发放[1]。报销单须在 30 天内通过星河报销系统提交[2]。"
    assert notes == [(1, "kept"), (2, "added")]


def test_a_sentence_no_paragraph_supports_loses_its_marker() -> None:
    """An English sentence about approvals no paragraph holds: its [3] is removed, said as "removed"."""
    text, notes = _how("Rollbacks take five minutes [3]. Approvals come from the security council board [3].")
    assert text == "Rollbacks take five minutes [3]. Approvals come from the security council board."
    assert notes == [(3, "kept"), (0, "removed")]


def test_labels_notices_and_bare_markers_are_left_alone() -> None:
    """The extractive label, a part heading, the notice and a bare "[1]" are no claims to attribute."""
    answer = "（摘录式回答：以下内容直接摘自资料）\n\n【病假有几天】\n[1]\n\n注意：缺少关于「事假」的资料，以上结论仅供参考。"
    assert attribute(answer, EVIDENCE) == (answer, ())


async def test_the_pipeline_stores_the_corrected_answer_its_citations_and_how_each_sentence_was_tied() -> (
    None
):
    """A model citing the expenses paragraph for a sick-leave sentence: the record's answer and citations say
    [1] (the sick-leave paragraph), and its attributions say "corrected"."""
    harness = build_harness()
    harness.kb.add("p1", LEAVE.content, document="病假与其他假期")
    harness.kb.add("p2", EXPENSES.content, document="费用报销")
    harness.engine.answers.append(["员工每年有 12 天带薪病假[2]。"])
    done = (await harness.ask("病假有几天?"))[-1]
    assert isinstance(done, Done) and done.record.answer is not None
    evidence = done.record.details.evidence_ids
    leave = evidence.index("p1") + 1
    assert done.record.answer.startswith(f"员工每年有 12 天带薪病假[{leave}]。")
    assert [item.n for item in done.record.details.citations] == [leave]
    assert [(a.source, a.how) for a in done.record.details.attributions] == [(leave, "corrected")]


def test_the_prompts_placeholder_copied_as_a_marker_becomes_the_paragraphs_number() -> None:
    """ "[编号]" (the prompt's word for the number) after a supported sentence is replaced by [2]."""
    assert _how("报销单须在 30 天内提交[编号]。") == ("报销单须在 30 天内提交[2]。", [(2, "corrected")])


class ScriptedMeaning:
    """A SentenceMeaning fake: the similarity of a text to a sentence is what the script says (else 0.1)."""

    def __init__(self, scores: dict[tuple[str, str], float]) -> None:
        self.scores = scores
        self.asked: list[str] = []

    def similarities(self, texts: Sequence[str], others: Sequence[str]) -> list[list[float]]:
        self.asked.extend(texts)
        return [[self._score(text, other) for other in others] for text in texts]

    def _score(self, text: str, other: str) -> float:
        return next((v for (a, b), v in self.scores.items() if a in text and b in other), 0.1)


REPHRASED = "病假的时候薪水不会被扣。"  # says what paragraph 1 says, in other words


def test_a_sentence_that_rephrases_its_paragraph_is_tied_to_it_by_meaning() -> None:
    """Too few shared words for the terms alone; close in meaning to the sick-leave paragraph's sentence and
    holding some of its weighted terms there: [1] is added, with the similarity kept."""
    assert attribute(REPHRASED, EVIDENCE)[1][0].how == "none"
    meaning = ScriptedMeaning({("薪水不会被扣", "工资照常发放"): 0.72})
    text, notes = attribute(REPHRASED, EVIDENCE, meaning)
    assert text == "病假的时候薪水不会被扣[1]。"
    assert [(n.source, n.how, n.meaning) for n in notes] == [(1, "added", 0.72)]


def test_meaning_never_ties_a_sentence_to_a_paragraph_that_holds_too_few_of_its_terms() -> None:
    """However close it reads, the expenses paragraph holds none of the sentence's words: no marker."""
    meaning = ScriptedMeaning({("薪水不会被扣", "报销单"): 0.9})
    text, notes = attribute(REPHRASED, EVIDENCE, meaning)
    assert text == REPHRASED and notes[0].how == "none"


def test_meaning_is_asked_only_about_sentences_the_terms_do_not_tie() -> None:
    """A sentence its terms already tie to a paragraph costs no encoder call."""
    meaning = ScriptedMeaning({})
    attribute("员工每年有 12 天带薪病假。", EVIDENCE, meaning)
    assert meaning.asked == []


def test_the_real_encoder_ties_a_rephrased_sentence_to_its_paragraph() -> None:
    """With the bundled offline encoder (LocalMeaning) the rephrased sentence gets the sick-leave paragraph."""
    from adapters.embedders.local import LocalMeaning

    text, notes = attribute("生病请假期间，工资会照常发给员工。", EVIDENCE, LocalMeaning())
    assert notes[0].source == 1 and notes[0].meaning >= 0.6, notes
    assert text.endswith("[1]。")


def test_a_sentence_joining_two_facts_cites_both_paragraphs() -> None:
    """'sick leave 12 days, expenses within 30 days' in one sentence: [1] and [2]."""
    text, notes = _how("员工每年享有 12 天带薪病假，报销单须在 30 天内通过星河报销系统提交。")
    assert text == "员工每年享有 12 天带薪病假，报销单须在 30 天内通过星河报销系统提交[1][2]。"
    assert notes == [(1, "added")]


def test_the_answers_own_labels_are_no_part_of_the_claim() -> None:
    """ "资料能支持的结论:" (the prompt's label) does not dilute the claim that follows it."""
    text, notes = _how("资料能支持的结论:报销单须在 30 天内提交。")
    assert text == "资料能支持的结论:报销单须在 30 天内提交[2]。" and notes == [(2, "added")]


def test_a_word_jieba_does_not_know_still_counts() -> None:
    """年假 comes out of jieba as 年 / 假; joined back, it ties "年假：20 天" to the annual-leave paragraph."""
    annual = Hit("p4", "入职满十年的员工，年假为 20 天。", 1.0, "hr", "d4", "年假制度", "年假天数")
    text, notes = attribute("年假：20 天", [*EVIDENCE, annual])
    assert text == "年假：20 天[4]" and notes[0].how == "added"


def test_a_sentence_only_partly_supported_gets_its_marker_after_the_supported_clause() -> None:
    """ "Rollbacks take five minutes, and approvals come from the security board": only the first clause has a
    source, so its [3] stands after that clause, not after the whole sentence."""
    text, notes = _how(
        "Rollbacks take five minutes, and production approvals come from the security council board chaired by Ada."
    )
    assert (
        text
        == "Rollbacks take five minutes [3], and production approvals come from the security council board chaired by Ada."
    )
    assert notes == [(3, "added")]


async def test_the_pipeline_hands_its_sentence_meaning_to_attribution() -> None:
    """A pipeline given a SentenceMeaning ties a model's rephrased sentence by it: the stored answer carries
    the marker and the record keeps the similarity."""
    meaning = ScriptedMeaning({("薪水不会被扣", "工资照常发放"): 0.72})
    harness = build_harness(meaning=meaning)
    harness.kb.add("p1", LEAVE.content, document="病假与其他假期")
    harness.engine.answers.append([REPHRASED])
    done = (await harness.ask("病假期间工资怎么算?"))[-1]
    assert isinstance(done, Done) and done.record.answer is not None
    leave = done.record.details.evidence_ids.index("p1") + 1
    assert done.record.answer.startswith(f"病假的时候薪水不会被扣[{leave}]。")
    assert [(a.source, a.how, a.meaning) for a in done.record.details.attributions] == [
        (leave, "added", 0.72)
    ]
    assert meaning.asked == ["病假的时候薪水不会被扣。"]
