"""The kind of quantity a question part asks for, and whether a sentence states one of that kind."""

from __future__ import annotations

import pytest

from adapters.extractive.language.quantities import answers_asked_quantity, asked_units

CASES = [
    ("工作满十年的职工，每年可以休几天带薪年假", "劳动者连续工作一年以上的，享受带薪年休假。", False),
    ("工作满十年的职工，每年可以休几天带薪年假", "职工累计工作已满10年不满20年的，年休假10天", True),
    ("交强险在死亡伤残方面最多赔多少钱", "由保险人在机动车强制保险责任限额范围内予以赔偿", False),
    ("某乡2026年行政审批服务中心的预算金额", "县级以上各级人民政府应当将行政复议工作经费列入本级预算", False),
    ("被单位辞退了，多久之内可以去申请劳动仲裁", "第二十七条 劳动争议申请仲裁的时效期间为一年。", True),
    ("试用期的工资最低可以按多少发", "不得低于劳动合同约定工资的百分之八十", True),
    ("男女最早几岁可以登记结婚", "结婚年龄，男不得早于二十二周岁，女不得早于二十周岁", True),
    ("违反了要赔多少", "按已经履行的超过法定试用期的期间向劳动者支付赔偿金", True),
    (
        "How many remote days per week are allowed",
        "Employees may work remotely for up to 2 days per week.",
        True,
    ),
    ("When was the film released", "The film premiered in 1945 in New York.", True),
    ("When was the film released", "The film premiered in New York.", False),
    ("有哪几种遗嘱形式", "遗嘱有自书遗嘱", True),
    ("国王在什么时候发动了十字军东征", "斯韦阿兰的国王在12世纪发动了十字军东征", True),
    ("国王在什么时候发动了十字军东征", "斯韦阿兰的国王发动了十字军东征", False),
    ("When was the abbey founded", "The abbey was founded in the 12th century.", True),
    ("When was the abbey founded", "The abbey was built in the 1990s.", True),
    ("When was the abbey founded", "William founded it in 1066.", True),
    ("What year was the abbey founded", "The abbey was founded in the 12th century.", False),
    ("How long is the bridge over the strait", "The bridge is 7,845 m long.", True),
    ("How long is the bridge over the strait", "The span is 16km.", True),
    ("How long is the bridge over the strait", "The bridge opened in 2000.", False),
    ("How long did the siege last", "The siege lasted three months.", True),
    ("开车闯红灯一次要扣几分", "第二十六条 交通信号灯由红灯、绿灯、黄灯组成。", False),
    ("开车闯红灯一次要扣几分", "闯红灯的，一次记六分", True),
    ("开车闯红灯一次要扣几分", "处二百元罚款，并处五分之一的罚款", False),
    ("等车最多要等几分钟", "发车间隔不超过十五分钟", True),
    ("到期续展一次要交多少官费", "每次续展注册的有效期为十年。", False),
    ("到期续展一次要交多少官费", "续展注册应当缴纳费用五百元。", True),
    ("我们市旅游投诉的电话是多少", "应当公开受理投诉的电话，自收到投诉之日起七个工作日内处理", False),
    ("我们市旅游投诉的电话是多少", "旅游投诉电话：12345。", True),
    ("消费者投诉热线是多少", "请拨打 010-6512 3456 反映", True),
    ("消费者投诉热线是多少", "2018年修正，共 100 人参加", False),
    ("What is the phone number of the helpdesk", "The helpdesk opened in 2019 with 300 staff.", False),
    ("What is the phone number of the helpdesk", "Call the helpdesk on +44 20 7946 0958.", True),
]


@pytest.mark.parametrize(("part", "text", "answers"), CASES)
def test_a_quantity_is_answered_only_by_a_number_of_the_asked_kind(
    part: str, text: str, answers: bool
) -> None:
    """Days by days, money by money, a year by a year, "when" also by a century or decade, a telephone number by
    digits; article labels are no numbers; lists and standards ask none."""
    assert answers_asked_quantity(part, text) is answers


def test_the_asked_kinds() -> None:
    """Each asking phrase maps to its units; a question asking for no quantity maps to None."""
    assert asked_units("申请期限是多久") == ("日", "天", "周", "星期", "月", "年", "小时", "分钟", "秒")
    assert asked_units("缴存比例最高是多少") == ("%", "％", "百分之", "分之", "成")
    assert asked_units("股东最多多少") == ()
    assert asked_units("由谁负责赔偿") is None
    assert asked_units("who directed the film") is None
    assert asked_units("失物招领中心电话是多少") == ("@phone",)
    assert asked_units("Which company made the first telephone") is None
