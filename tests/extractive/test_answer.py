"""The extractive answer: quoted sentences per part, citations by evidence index, plain not-found, streamed."""

from __future__ import annotations

import re

from adapters.extractive import ExtractiveEngine
from core.messages import CORE
from core.models import AnswerRequest, Usage
from tests.extractive.helpers import collect, hit

EVIDENCE = (
    hit(1, "食堂位于总部一楼。", "后勤.md"),
    hit(
        2,
        "所有费用必须在费用发生之日起 30 天内提交报销单。超过 90 天的费用不再受理。",
        "费用报销.md",
        "报销截止期限",
    ),
    hit(
        3,
        "工龄满 1 年不满 5 年：每年 10 天年假。\n工龄满 5 年不满 10 年：每年 15 天年假。",
        "年假制度.md",
        "年假天数",
    ),
)


async def test_each_part_quotes_its_evidence_with_the_evidence_index() -> None:
    """Sentences for each part are quoted verbatim and cite [n], the 1-based index of their paragraph."""
    request = AnswerRequest(question="年假有几天，以及报销的截止期限是多久？", evidence=EVIDENCE, lang="zh")
    deltas, completions = await collect(ExtractiveEngine().answer(request))
    text = completions[0].text
    leave, expenses = text.split("【年假有几天】")[1].split("【报销的截止期限是多久】")
    assert "- 工龄满 1 年不满 5 年：每年 10 天年假。 [3]" in leave
    assert "- 工龄满 5 年不满 10 年：每年 15 天年假。 [3]" in leave
    assert "- 所有费用必须在费用发生之日起 30 天内提交报销单。 [2]" in expenses
    assert "[1]" not in text  # the canteen paragraph answers nothing
    assert "".join(deltas) == text


async def test_uncovered_part_says_not_found_and_invents_nothing() -> None:
    """A part without evidence is reported as not found; only evidence sentences carry citations."""
    request = AnswerRequest(
        question="报销的截止期限是多久？另外公司 2026 年的团建预算是多少？", evidence=EVIDENCE, lang="zh"
    )
    _, completions = await collect(ExtractiveEngine().answer(request))
    text = completions[0].text
    assert "资料中未找到关于「公司 2026 年的团建预算是多少」的信息。" in text
    assert "2026" not in text.replace("公司 2026 年的团建预算是多少", "")  # only the question echoes it
    quoted = [line for line in text.splitlines() if re.search(r"\[\d+\]$", line)]
    sources = "".join(h.content for h in EVIDENCE)
    assert quoted and all(line[2:].rsplit(" [", 1)[0] in sources for line in quoted)


async def test_label_and_stream_shape() -> None:
    """The answer starts with the extractive label, streams several deltas, then one final Completion."""
    request = AnswerRequest(question="年假有几天？", evidence=EVIDENCE, lang="zh")
    items = [item async for item in ExtractiveEngine().answer(request)]
    deltas, final = items[:-1], items[-1]
    assert len(deltas) > 1 and all(isinstance(d, str) for d in deltas)
    assert not isinstance(final, str)
    assert final.text.startswith(CORE.text("extractive.label", "zh"))
    assert final.finish_reason == "stop"
    assert final.usage == Usage()
    assert final.text == "".join(d for d in deltas if isinstance(d, str))


async def test_english_answer_and_not_found() -> None:
    """request.lang='en' gives the English label, part headings and not-found sentence."""
    evidence = (
        hit(
            1,
            "Employees may work remotely for up to 2 days per week.\nCore hours are 10:00 to 16:00.",
            "remote.md",
        ),
    )
    request = AnswerRequest(
        question="How many remote days per week are allowed, and what is the parking fee?",
        evidence=evidence,
        lang="en",
    )
    _, completions = await collect(ExtractiveEngine().answer(request))
    text = completions[0].text
    assert text.startswith(CORE.text("extractive.label", "en"))
    assert "- Employees may work remotely for up to 2 days per week. [1]" in text
    assert 'The sources contain no information about "what is the parking fee".' in text
    assert "Core hours" not in text


async def test_no_evidence_answers_nothing_but_the_gap() -> None:
    """With no evidence at all every part is reported as not found and nothing is cited."""
    request = AnswerRequest(question="年假有几天？", evidence=(), lang="zh", sufficient=False)
    _, completions = await collect(ExtractiveEngine().answer(request))
    assert (
        completions[0].text
        == CORE.text("extractive.label", "zh") + "\n\n资料中未找到关于「年假有几天」的信息。\n"
    )


async def test_the_best_row_of_a_table_is_quoted_with_its_headers() -> None:
    """Markdown table rows are read with their column headers, and only the matching row is quoted."""
    table = (
        "| 城市等级 | 代表城市 | 住宿上限 |\n| --- | --- | --- |\n"
        "| 一线城市 | 北京、上海 | 600 元 |\n| 二线城市 | 杭州、成都 | 450 元 |"
    )
    request = AnswerRequest(
        question="杭州的住宿上限是多少？", evidence=(hit(1, table, "费用报销.md"),), lang="zh"
    )
    _, completions = await collect(ExtractiveEngine().answer(request))
    text = completions[0].text
    assert "- 城市等级：二线城市；代表城市：杭州、成都；住宿上限：450 元。 [1]" in text
    assert "600 元" not in text


async def test_a_bridge_answer_quotes_both_hops() -> None:
    """The film paragraph naming the actress and the paragraph about her are both quoted; the distractor is not."""
    from tests.extractive.test_assess_multihop import KISS, KISS_QUESTION, TEMPLE, TREASURER

    request = AnswerRequest(question=KISS_QUESTION, evidence=(KISS, TREASURER, TEMPLE), lang="en")
    _, completions = await collect(ExtractiveEngine().answer(request))
    text = completions[0].text
    assert "Shirley Temple as Corliss Archer. [1]" in text
    assert "Chief of Protocol of the United States. [3]" in text
    assert "[2]" not in text


async def test_an_unsupported_part_with_its_subject_in_the_evidence_shows_the_closest_passage_as_unconfirmed() -> (
    None
):
    """The film paragraph alone does not answer the bridge question: it is shown, said to be unconfirmed."""
    from tests.extractive.test_assess_multihop import KISS, KISS_QUESTION, TREASURER

    request = AnswerRequest(question=KISS_QUESTION, evidence=(KISS, TREASURER), lang="en")
    _, completions = await collect(ExtractiveEngine().answer(request))
    text = completions[0].text
    assert "It could not be confirmed that the sources answer" in text
    assert "[1]" in text and "The sources contain no information" not in text


async def test_a_near_miss_about_another_subject_is_reported_not_found() -> None:
    """A budget figure of another body is neither support nor a closest passage for 某乡's 2026 budget."""
    evidence = (
        hit(1, "县级以上各级人民政府应当将行政复议工作经费列入本级预算，预算金额为 5000 元。", "行政复议法"),
    )
    request = AnswerRequest(question="某乡 2026 年行政审批服务中心的预算金额是多少？", evidence=evidence)
    _, completions = await collect(ExtractiveEngine().answer(request))
    assert "资料中未找到关于「某乡 2026 年行政审批服务中心的预算金额是多少」的信息" in completions[0].text


async def test_a_part_supported_only_in_degree_is_quoted_without_the_unconfirmed_label() -> None:
    """A paraphrased part its paragraph partly supports (judging.assess.lacks_something is false) is answered
    from that paragraph, cited, and not introduced as unconfirmed."""
    from tests.extractive.test_assess import AWARDS, PARAPHRASED

    request = AnswerRequest(question=PARAPHRASED, evidence=(AWARDS,), lang="en")
    _, completions = await collect(ExtractiveEngine().answer(request))
    text = completions[0].text
    assert "Gramophone Award in 2004" in text and "[1]" in text
    assert "could not be confirmed" not in text and "no information" not in text


async def test_the_rerankers_first_paragraph_adds_its_best_sentence_to_a_part_another_paragraph_anchors() -> (
    None
):
    """A staff FAQ restating the everyday question anchors it by words; the regulation the reranker put first
    still contributes a sentence, after the FAQ's, none of which is displaced."""
    regulation = hit(
        1,
        "第五条 单位确因工作需要不能安排职工休年休假的，经职工本人同意，可以不安排职工休年休假。"
        "对职工应休未休的年假天数，单位应当按照该职工日工资收入的百分之三百支付年假工资报酬。",
        "职工带薪年休假条例.md",
    )
    faq = hit(2, "没休完的年假能不能换成钱，员工经常问到。换成钱的手续由人事部办理。", "员工问答.md")
    request = AnswerRequest(question="没休完的年假能换成钱吗？", evidence=(regulation, faq), lang="zh")
    _, completions = await collect(ExtractiveEngine().answer(request))
    lines = [line for line in completions[0].text.splitlines() if line.startswith("- ")]
    assert lines[0] == "- 没休完的年假能不能换成钱，员工经常问到。 [2]"
    assert lines[1:] == [
        "- 对职工应休未休的年假天数，单位应当按照该职工日工资收入的百分之三百支付年假工资报酬。 [1]"
    ]


async def test_every_paragraph_that_supports_a_part_is_quoted_and_cited() -> None:
    """The handbook and the FAQ fill the quoted sentences by words, but the leave notice, whose title covers
    the part as well, still gives its best sentence, cited [2], after them (none displaced): a paragraph the
    judge found supporting the part is never left uncited."""
    handbook = hit(
        1, "员工申请年假应当提前一周。员工申请年假应当填写表格。员工申请年假可以分次。", "员工手册.md"
    )
    notice = hit(2, "员工须经部门负责人批准后提交人事部备案。", "员工年假申请须知.md")
    faq = hit(3, "员工申请年假当年有效。员工申请年假不影响奖金。员工申请年假由系统记录。", "常见问题.md")
    request = AnswerRequest(question="员工怎么申请年假？", evidence=(handbook, notice, faq), lang="zh")
    _, completions = await collect(ExtractiveEngine().answer(request))
    lines = [line for line in completions[0].text.splitlines() if line.startswith("- ")]
    assert len(lines) == 6 and sum(line.endswith("[1]") for line in lines) == 3
    assert lines[-1] == "- 员工须经部门负责人批准后提交人事部备案。 [2]"


async def test_a_sentence_two_versions_of_a_law_share_is_quoted_once() -> None:
    """The current and the older version of a law both hold the answering sentence: it is quoted once, from
    the first (preferred) paragraph, not once per version."""
    sentence = "上述人员离职后半年内，不得转让其所持有的本公司股份。"
    evidence = (
        hit(
            1, f"第一百六十条 公司董事应当向公司申报所持有的本公司的股份。{sentence}", "公司法(2023-12-29).md"
        ),
        hit(2, "第一百四十条 上市公司应当依法披露股东信息。", "公司法(2023-12-29).md"),
        hit(
            3,
            f"第一百四十一条 公司董事应当向公司申报所持有的本公司的股份。{sentence}",
            "公司法(2018-10-26).md",
        ),
    )
    request = AnswerRequest(question="公司董事离职后多久不得转让本公司股份？", evidence=evidence, lang="zh")
    _, completions = await collect(ExtractiveEngine().answer(request))
    text = completions[0].text
    assert text.count(sentence) == 1
    assert f"{sentence} [1]" in text
