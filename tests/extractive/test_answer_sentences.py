"""The extractive answer quotes the sentences that answer each part, wherever in the evidence they are."""

from __future__ import annotations

import pytest

from adapters.extractive import ExtractiveEngine
from adapters.extractive.answer import supported_sentences
from adapters.extractive.judging.support import PartSupport
from adapters.extractive.language.quantities import asked_bound, states_bound
from adapters.extractive.language.relevance import SentenceIndex, asks, score_sentences
from adapters.extractive.language.semantic import Similarities
from adapters.extractive.language.sentences import split_sentences
from adapters.extractive.question.salience import part_terms
from core.models import AnswerRequest
from tests.extractive.helpers import MeaningEmbedder, collect, hit

PROBATION = "劳动合同的试用期最长可以约定多久？"
OPENING = "第十九条 劳动合同可以约定试用期，试用期的约定应当遵守本条规定。"
LIMIT = "固定期限三年以上的，试用期不得超过六个月。"
PARAPHRASE = "新入职人员的考察期最多为六个月。"
WAGES = "劳动者在试用期的工资不得低于本单位相同岗位最低档工资。"


def _embedder() -> MeaningEmbedder:
    return MeaningEmbedder(
        {
            PROBATION.rstrip("？"): [1.0, 0.0, 0.0],
            OPENING.rstrip("。"): [0.5, 0.86, 0.0],
            LIMIT.rstrip("。"): [0.85, 0.52, 0.0],
            WAGES.rstrip("。"): [0.3, 0.95, 0.0],
            PARAPHRASE.rstrip("。"): [0.8, 0.6, 0.0],
        }
    )


async def _answer(question: str, evidence: list, embedder: MeaningEmbedder | None) -> str:
    engine = ExtractiveEngine(embedder=embedder)
    _, completions = await collect(engine.answer(AnswerRequest(question, tuple(evidence), lang="zh")))
    return completions[0].text


async def test_the_sentence_that_states_the_limit_is_quoted_not_only_the_opening() -> None:
    """The article's opening repeats the question's words; the sentence stating the six months is quoted."""
    evidence = [hit(1, f"{OPENING}{LIMIT}", "劳动合同法.md", "第十九条"), hit(2, WAGES, "劳动合同法.md")]
    text = await _answer(PROBATION, evidence, _embedder())
    assert f"- {LIMIT} [1]" in text
    assert "未找到" not in text


async def test_a_paragraph_the_judge_did_not_pick_contributes_its_answering_sentence() -> None:
    """The limit stated in other words in another paragraph, which shares no word with the question, is
    quoted with its own citation."""
    evidence = [hit(1, f"{OPENING}{WAGES}", "劳动合同法.md"), hit(2, PARAPHRASE, "入职须知.md")]
    text = await _answer(PROBATION, evidence, _embedder())
    assert f"- {PARAPHRASE} [2]" in text


async def test_a_sentence_far_in_meaning_and_words_is_left_out() -> None:
    """The wages sentence shares a word but neither answers nor reads like the question: it is not quoted."""
    evidence = [hit(1, f"{OPENING}{LIMIT}", "劳动合同法.md"), hit(2, WAGES, "劳动合同法.md")]
    text = await _answer(PROBATION, evidence, _embedder())
    assert WAGES not in text


def test_meaning_outranks_repeated_words_and_rare_words_outrank_common_ones() -> None:
    """Scores: words alone put the sentence stating the asked limit ("不得超过") above the opening that repeats
    the question, and meaning keeps it there; without meaning, the rarer shared words lead ("工资" over the
    common "试用期")."""
    evidence = [hit(1, f"{OPENING}{LIMIT}{WAGES}", "劳动合同法.md")]
    sentences = split_sentences(evidence)
    index = SentenceIndex.of(evidence, sentences)
    part = PROBATION.rstrip("？")
    by_words = score_sentences(part, index, None)
    assert [item.sentence.text for item in by_words[:2]] == [LIMIT, OPENING]
    meaning = Similarities((part,), tuple(sentences), ((0.5, 0.85, 0.3),))
    assert score_sentences(part, index, meaning)[0].sentence.text == LIMIT
    words_only = score_sentences("试用期工资最低多少", index, None)
    assert words_only[0].sentence.text == WAGES


async def test_without_support_the_closest_sentence_is_shown_with_its_citation_not_not_found() -> None:
    """A part the judge cannot confirm, answered by a sentence close in meaning: the closest passage is
    quoted under the could-not-confirm line, never "not found"."""
    question = "新员工最多要先试几个月？"
    embedder = MeaningEmbedder(
        {question.rstrip("？"): [1.0, 0.0, 0.0], LIMIT.rstrip("。"): [0.42, 0.9075, 0.0]}
    )
    text = await _answer(question, [hit(1, LIMIT, "劳动合同法.md")], embedder)
    assert "未找到" not in text
    assert "未能确认" in text
    assert f"- {LIMIT} [1]" in text


async def test_a_part_is_not_quoted_from_the_paragraph_another_part_is_answered_from() -> None:
    """Compound question: the sick-leave sentence reads close to the expenses part, but it answers the
    sick-leave part, so it is quoted there only."""
    question = "病假有几天，以及报销的截止期限是多久？"
    sick = "员工每年享有 12 天带薪病假。"
    expenses = "所有费用必须在 30 天内提交报销单，这是报销的截止期限。"
    embedder = MeaningEmbedder(
        {
            "病假有几天": [1.0, 0.0, 0.0],
            "报销的截止期限是多久": [0.0, 1.0, 0.0],
            sick.rstrip("。"): [0.75, 0.66, 0.0],
            expenses.rstrip("。"): [0.0, 0.7, 0.71],
        }
    )
    evidence = [hit(1, sick, "病假与其他假期.md", "病假"), hit(2, expenses, "费用报销.md", "报销截止期限")]
    text = await _answer(question, evidence, embedder)
    leave, deadline = text.split("【报销的截止期限是多久】")
    assert f"- {sick} [1]" in leave
    assert sick not in deadline and f"- {expenses} [2]" in deadline


async def test_a_paraphrased_answer_is_quoted_as_the_answer_not_unconfirmed_or_not_found() -> None:
    """The paragraph about 明德中学 answers in other words (校名取自, not 名字来自) and only loosely in meaning:
    it names the subject and holds most of the part, so nothing is missing: its sentence is quoted as the
    answer, neither "not found" nor unconfirmed (docs/design.md#the-uncertainty-notice)."""
    question = "明德中学的名字来自于哪本经典著作？"
    opening = "明德中学位于江苏省，创办于 1920 年。"
    origin = "校名取自《诗经》中的一句诗，校训为“明道”。"
    embedder = MeaningEmbedder(
        {
            question.rstrip("？"): [1.0, 0.0, 0.0],
            opening.rstrip("。"): [0.1, 0.995, 0.0],
            origin.rstrip("。"): [0.35, 0.937, 0.0],
        }
    )
    text = await _answer(question, [hit(1, opening + origin, "明德中学.md")], embedder)
    assert "未找到" not in text and "未能确认" not in text
    assert f"- {origin} [1]" in text


async def test_a_question_in_the_evidence_is_not_quoted_as_its_answer() -> None:
    """A thread or FAQ that repeats the question ("…最长可以约定多久？") answers it in the next sentence: that
    sentence is quoted, the evidence's own question is not (without an encoder: words alone)."""
    evidence = [hit(1, f"请问{PROBATION}{LIMIT}", "#hr: 试用期", "")]
    text = await _answer(PROBATION, evidence, None)
    assert f"- {LIMIT} [1]" in text
    assert "请问" not in text


def test_only_a_question_is_scored_when_nothing_else_is() -> None:
    """When every matching sentence is a question, the questions are still scored (nothing is hidden)."""
    evidence = [hit(1, f"请问{PROBATION}", "#hr: 试用期", "")]
    sentences = split_sentences(evidence)
    assert [s.sentence.text for s in score_sentences(PROBATION, SentenceIndex.of(evidence, sentences), None)]


@pytest.mark.parametrize(
    ("sentence", "is_question"),
    [
        ("How do I get VPN access from home?", True),
        ("请问劳动合同的试用期最长可以约定多久？", True),
        ("**Is it free?**", True),
        ('The title is a parody of "Who\'s Afraid of Virginia Woolf?"', False),  # a quoted question
        ("\"Who's Afraid of Virginia Woolf?", False),  # the splitter cut inside a quoted title
        ("他说“你去哪？”", False),
        ("The limit is six months.", False),
    ],
)
def test_a_question_is_a_sentence_ending_with_its_own_question_mark(sentence: str, is_question: bool) -> None:
    """Only a question the sentence itself asks counts; a question inside quotation marks is a title or speech."""
    assert asks(sentence) is is_question


def test_the_best_sentence_of_the_evidence_is_quoted_first_when_the_judge_tied_the_part_elsewhere() -> None:
    """The judge covered the part by two linked paragraphs that only share its words; the handbook
    sentence stating the monthly cap, in a third paragraph, answers it better and is quoted first."""
    question = "公司让我们加班，一个月最多能加多少个小时"
    penalty = hit(
        1, "第八十五条 用人单位安排加班不支付加班费的，由劳动行政部门责令限期支付。", "劳动合同法.md"
    )
    part_time = hit(2, "第六十八条 非全日制用工，劳动者平均每日工作时间不超过四小时。", "劳动合同法.md")
    cap = "公司安排加班的，每月加班时间累计不得超过三十六小时。"
    evidence = [penalty, part_time, hit(3, cap, "员工手册.md")]
    support = PartSupport(terms=part_terms(question), covered=True, anchor=penalty, paragraphs=(0, 1), hop=1)
    chosen = supported_sentences(support, evidence, split_sentences(evidence))
    assert chosen[0].text == cap and chosen[0].source == 3
    assert {s.source for s in chosen[1:]} == {1, 2}


def test_the_best_sentence_of_the_evidence_is_not_added_when_a_quoted_one_scores_as_well() -> None:
    """When the linked paragraphs already hold the best-scoring sentence, nothing from elsewhere is added."""
    question = "公司让我们加班，一个月最多能加多少个小时"
    cap = hit(1, "公司安排加班的，每月加班时间累计不得超过三十六小时。", "员工手册.md")
    part_time = hit(2, "第六十八条 非全日制用工，劳动者平均每日工作时间不超过四小时。", "劳动合同法.md")
    other = hit(
        3, "第四十四条 安排劳动者延长工作时间的，支付不低于工资的百分之一百五十的工资报酬。", "劳动法.md"
    )
    evidence = [cap, part_time, other]
    support = PartSupport(terms=part_terms(question), covered=True, anchor=cap, paragraphs=(0, 1), hop=1)
    chosen = supported_sentences(support, evidence, split_sentences(evidence))
    assert all(s.source != 3 for s in chosen)


def test_the_best_sentence_naming_the_subject_is_quoted_first_when_no_quoted_one_names_it() -> None:
    """The judge tied the part to paragraphs that never name its subject (Acme Corp): the best sentence of
    the paragraphs that do is quoted first, so the answer says whom it is about."""
    question = "How many days of annual leave does Acme Corp give"
    evidence = [
        hit(
            1,
            "Staff get 15 days of annual leave a year, and unused annual leave days carry over.",
            "handbook.md",
        ),
        hit(2, "Leave requests go to the HR office.", "hr.md"),
        hit(3, "Acme Corp was founded in 1990 in Ohio.", "history.md"),
    ]
    support = PartSupport(
        terms=part_terms(question), covered=True, anchor=evidence[0], paragraphs=(0, 1), hop=1
    )
    chosen = supported_sentences(support, evidence, split_sentences(evidence))
    assert chosen[0].source == 3
    assert {s.source for s in chosen[1:]} == {1, 2}


async def test_a_quoted_list_item_brings_the_sentence_that_announces_its_list() -> None:
    """ "（二）醉酒驾驶机动车的；" answers nothing alone: the article's lead-in, which holds the penalty, is
    quoted before it."""
    article = (
        "第一百三十三条之一 在道路上驾驶机动车，有下列情形之一的，处拘役，并处罚金：\n\n"
        "（一）追逐竞驶，情节恶劣的；\n\n（二）醉酒驾驶机动车的；\n\n"
        "有前款行为，同时构成其他犯罪的，依照处罚较重的规定定罪处罚。"
    )
    evidence = [
        hit(1, article, "刑法.md"),
        hit(2, "第九十一条 饮酒后驾驶机动车的，处暂扣驾驶证。", "道交法.md"),
    ]
    text = await _answer("醉酒驾驶机动车的要怎么处罚？", evidence, None)
    lines = [line for line in text.splitlines() if line.startswith("- ")]
    lead = "- 第一百三十三条之一 在道路上驾驶机动车，有下列情形之一的，处拘役，并处罚金： [1]"
    assert lead in lines
    assert lines.index(lead) < lines.index("- （二）醉酒驾驶机动车的； [1]")


async def test_a_part_asking_for_a_limit_is_answered_by_the_sentence_stating_one() -> None:
    """ "最长…多久": the sentence stating an upper limit ("最长不得超过六个月") is quoted, though two others repeat
    more of the question's words and one of them states a duration too; no encoder, words alone."""
    article = "第二十一条 劳动合同可以约定试用期。试用期最长不得超过六个月。"
    other = "以完成一定工作任务为期限的劳动合同或者劳动合同期限不满三个月的，不得约定试用期。"
    evidence = [hit(1, other, "劳动合同法.md"), hit(2, article, "劳动法.md")]
    text = await _answer(PROBATION, evidence, None)
    assert "- 试用期最长不得超过六个月。 [2]" in text


@pytest.mark.parametrize(
    ("part", "direction"),
    [
        ("劳动合同的试用期最长可以约定多久", "upper"),
        ("男女最早几岁可以登记结婚", "lower"),
        ("How many days at most can the leave last?", "upper"),
        ("劳动合同的试用期可以约定多久", None),  # no limit asked
        ("最长的河流叫什么名字", None),  # a superlative, but no quantity asked
    ],
)
def test_the_limit_a_part_asks_for(part: str, direction: str | None) -> None:
    """A limit is asked for only with a quantity, and its direction decides which stated limits answer it."""
    assert asked_bound(part) == direction


def test_a_stated_limit_has_a_direction() -> None:
    """ "不得超过" and "以下" state upper limits, "不得早于" and "at least" lower ones."""
    assert states_bound("试用期不得超过六个月", "upper") and states_bound("二百人以下", "upper")
    assert states_bound("男不得早于二十二周岁", "lower") and states_bound("at least 30 days", "lower")
    assert not states_bound("试用期不得超过六个月", "lower")
