"""A part pointing back at the part before it is answered about what answers that part (question/chain.py)."""

from __future__ import annotations

from adapters.extractive.engine import ExtractiveEngine
from adapters.extractive.language.sentences import Sentence
from adapters.extractive.question.chain import carried_words, points_back
from core.models import AnswerRequest
from tests.extractive.helpers import collect, hit

IT = hit(1, "VPN 由基础设施组负责运维，连接故障请在 IT 服务台提交工单。", "IT账号与设备.md")
ORG = hit(
    2,
    "人事部：负责招聘和入离职，负责人为周晓岚。\n财务部：负责报销复核，负责人为陈立衡。\n"
    "基础设施组：负责网络、VPN 和服务器，负责人为林远航。\n安全响应组：负责信息安全事件，负责人为顾以宁。",
    "组织架构.md",
)


def test_a_demonstrative_points_back_and_the_earlier_answer_clause_gives_its_words() -> None:
    """这个部门 / that group point back; the clause matching the first part names 基础设施, which is carried."""
    assert points_back("这个部门的负责人是谁") and points_back("on which floor does that group sit")
    assert not points_back("报销的截止期限是多久") and not points_back("what is the policy that is current")
    answer = Sentence(text=IT.content, source=1, position=0)
    assert carried_words("这个部门的负责人是谁", "VPN 由哪个部门负责运维", [answer]) == ("基础设施",)
    assert carried_words("报销的截止期限是多久", "VPN 由哪个部门负责运维", [answer]) == ()


async def test_the_second_hop_quotes_the_line_about_the_first_hops_answer_not_every_heads() -> None:
    """The extractive answer quotes the infrastructure group's head for 这个部门, and no other department's."""
    request = AnswerRequest(
        question="VPN 由哪个部门负责运维？这个部门的负责人是谁？", evidence=(IT, ORG), lang="zh"
    )
    _, completions = await collect(ExtractiveEngine().answer(request))
    second = completions[0].text.split("【这个部门的负责人是谁】", 1)[1]
    assert "负责人为林远航" in second
    assert not any(name in second for name in ("周晓岚", "陈立衡", "顾以宁"))


def test_nothing_is_carried_from_an_earlier_part_too_short_or_an_answer_not_restating_it() -> None:
    """ "Which year" names one word: any clause with "year" would pass for its answer; a sentence sharing one
    word of a longer part does not restate it either."""
    answer = Sentence(
        text="The Buffaloes were led by fourth year head coach Dan Hawkins.", source=1, position=0
    )
    assert carried_words("which conference was this conference", "Which year", [answer]) == ()
    other = Sentence(text="由用人单位以劳动者试用期满月工资为标准支付赔偿金。", source=1, position=0)
    assert (
        carried_words("按那个标准每年算多少", "公司违法解除劳动合同要付的赔偿金是按哪种标准算的", [other])
        == ()
    )
