"""A quoted sentence that defers to another article ("依照本法第九十九条的规定处罚") brings that article's sentence."""

from __future__ import annotations

from adapters.extractive import ExtractiveEngine
from core.models import AnswerRequest
from tests.extractive.helpers import collect, hit

DUST = "工地不采取防尘措施会怎么处理？"
CITING = "第七十条 施工工地未采取防尘措施的，依照本法第九十九条的规定处罚。"
CITED = "第九十九条 由县级以上人民政府生态环境主管部门责令改正，处一万元以上十万元以下的罚款。"
ELSEWHERE = "第九十九条 国家鼓励和支持清洁能源的开发利用。"


async def _answer(question: str, evidence: list) -> str:
    engine = ExtractiveEngine()
    _, completions = await collect(engine.answer(AnswerRequest(question, tuple(evidence), lang="zh")))
    return completions[0].text


async def test_the_article_a_quoted_sentence_cites_in_its_own_law_is_quoted_beside_it() -> None:
    """本法第九十九条 is the same document's article 99, not another law's article of that number."""
    evidence = [
        hit(1, CITING, "大气污染防治法.md", "第七章 法律责任"),
        hit(2, ELSEWHERE, "可再生能源法.md", "第一章 总则"),
        hit(3, f"第九十八条 违反本法规定的，责令改正。\n\n{CITED}", "大气污染防治法.md", "第七章 法律责任"),
    ]
    text = await _answer(DUST, evidence)
    assert f"- {CITING} [1]" in text
    assert f"- {CITED} [3]" in text
    assert ELSEWHERE not in text
    assert "第九十八条" not in text


async def test_an_article_of_another_law_named_by_title_is_quoted_beside_the_citing_sentence() -> None:
    """《中华人民共和国刑法》第一百三十三条 is found in the document 刑法.md, its article and no other."""
    citing = "第一百零一条 发生重大交通事故，构成犯罪的，依照《中华人民共和国刑法》第一百三十三条的规定追究刑事责任。"
    cited = "第一百三十三条 违反交通运输管理法规，因而发生重大事故的，处三年以下有期徒刑或者拘役。"
    other = "第一百三十二条 铁路职工违反规章制度，致使发生铁路运营安全事故的，处三年以下有期徒刑。"
    evidence = [
        hit(1, citing, "道路交通安全法(2021-04-29).md", "第七章 法律责任"),
        hit(2, f"{other}\n\n{cited}", "刑法.md", "第二章 危害公共安全罪"),
    ]
    text = await _answer("发生重大交通事故构成犯罪的怎么追究？", evidence)
    assert f"- {cited} [2]" in text
    assert other not in text


async def test_nothing_is_added_when_the_evidence_lacks_the_cited_article() -> None:
    """A citation of an article the evidence does not hold adds nothing (and no other article stands in)."""
    evidence = [hit(1, CITING, "大气污染防治法.md"), hit(2, ELSEWHERE, "可再生能源法.md")]
    text = await _answer(DUST, evidence)
    assert f"- {CITING} [1]" in text
    assert "[2]" not in text
