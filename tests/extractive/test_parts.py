"""The compound-question split: one part per clause, per enumerated item, per compared entity."""

from __future__ import annotations

import pytest

from adapters.extractive import split_question


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        ("年假有几天，以及报销的截止期限是多久？", ["年假有几天", "报销的截止期限是多久"]),
        ("年假有几天和报销的截止期限是多久？", ["年假有几天", "报销的截止期限是多久"]),
        (
            "年假最多可以结转几天，并且结转的年假什么时候作废",
            ["年假最多可以结转几天", "结转的年假什么时候作废"],
        ),
        ("报销的截止期限是多久；出差补贴每天多少钱", ["报销的截止期限是多久", "出差补贴每天多少钱"]),
        ("年假有几天？病假需要什么证明？", ["年假有几天", "病假需要什么证明"]),
        ("密码多久更换一次，笔记本电脑几年换一次", ["密码多久更换一次", "笔记本电脑几年换一次"]),
    ],
)
def test_chinese_clauses_split_at_connectors(question: str, parts: list[str]) -> None:
    """以及, 并且, 和 between clauses, ；, a second question and comma-joined questions each start a part."""
    assert split_question(question) == parts


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        ("北京和上海的住宿标准哪个更高？", ["北京的住宿标准哪个更高", "上海的住宿标准哪个更高"]),
        ("年假和病假分别有几天？", ["年假有几天", "病假有几天"]),
        (
            "北京、上海和杭州的住宿上限分别是多少",
            ["北京的住宿上限是多少", "上海的住宿上限是多少", "杭州的住宿上限是多少"],
        ),
        (
            "Java 的基本数据类型和引用类型有什么区别",
            ["Java 的基本数据类型有什么区别", "Java 的引用类型有什么区别"],
        ),
        ("年假比病假多几天", ["年假多几天", "病假多几天"]),
    ],
)
def test_compared_entities_each_get_a_part(question: str, parts: list[str]) -> None:
    """X 和 Y 哪个…, X 与 Y 分别…, X、Y 和 Z…, X 比 Y… distribute the rest of the question over each entity."""
    assert split_question(question) == parts


def test_enumerations_split_and_keep_their_preamble() -> None:
    """1. 2. items and 一是…二是… items become parts, each carrying the preamble's subject."""
    assert split_question("关于报销：1. 截止期限是多久 2. 需要谁审批") == [
        "关于报销 截止期限是多久",
        "关于报销 需要谁审批",
    ]
    assert split_question("报销制度一是截止期限，二是审批流程") == ["报销制度 截止期限", "报销制度 审批流程"]


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        (
            "How many days of annual leave do I get and what is the deadline for expense claims?",
            ["How many days of annual leave do I get", "what is the deadline for expense claims"],
        ),
        (
            "What are the core hours as well as the stipend amount?",
            ["What are the core hours", "the stipend amount"],
        ),
        (
            "How many remote days per week are allowed; who approves them?",
            ["How many remote days per week are allowed", "who approves them"],
        ),
        (
            "What is the difference between int and long?",
            ["What is the difference between int", "What is the difference between long"],
        ),
    ],
)
def test_english_compounds_split(question: str, parts: list[str]) -> None:
    """'and' before a new question, 'as well as', ';' and compared entities split English questions."""
    assert split_question(question) == parts


@pytest.mark.parametrize(
    "question",
    [
        "Java 有哪些基本数据类型？",
        "如果因不可抗力耽误了这个期限,应当如何计算?",
        "What are the terms and conditions of the stipend?",
        "How long do I have to submit expense claims?",
    ],
)
def test_single_questions_stay_whole(question: str) -> None:
    """A question with one subject (even with 'and' inside a noun phrase) is returned unchanged."""
    assert split_question(question) == [question]


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        (
            "Which magazine was started first, Arthur's Magazine or First for Women?",
            [
                "Which magazine was started first, Arthur's Magazine",
                "Which magazine was started first, First for Women",
            ],
        ),
        (
            "Were Scott Derrickson and Ed Wood of the same nationality?",
            ["Were Scott Derrickson of the same nationality", "Were Ed Wood of the same nationality"],
        ),
        (
            "Which writer was from England, Henry Roth or Robert Erskine Childers?",
            [
                "Which writer was from England, Henry Roth",
                "Which writer was from England, Robert Erskine Childers",
            ],
        ),
        (
            "Is the Leave Policy, the Travel Policy, or the Expense Policy the oldest?",
            [
                "Is the Leave Policy the oldest",
                "Is the Travel Policy the oldest",
                "Is the Expense Policy the oldest",
            ],
        ),
        (
            "Which river is longer, the Ardle and the Ericht?",
            ["Which river is longer, the Ardle", "Which river is longer, the Ericht"],
        ),
        (
            "Which genus has more species, Quillaria and Hopsella?",
            ["Which genus has more species, Quillaria", "Which genus has more species, Hopsella"],
        ),
        (
            "Hayden is a singer-songwriter from Canada, but where does Buck-Tick hail from?",
            ["Hayden is a singer-songwriter from Canada", "where does Buck-Tick hail from"],
        ),
    ],
)
def test_english_compared_names_each_get_a_part(question: str, parts: list[str]) -> None:
    """Names joined by 'or', or by 'and' with a comparison cue (a comparative among them), get one part each; a
    contrast clause splits."""
    assert split_question(question) == parts


@pytest.mark.parametrize(
    "question",
    [
        "What government position was held by the woman who portrayed Corliss Archer in the film Kiss and Tell?",
        'What screenwriter with credits for "Evolution" co-wrote a film starring Nicolas Cage and Téa Leoni?',
    ],
)
def test_names_joined_without_a_comparison_stay_together(question: str) -> None:
    """A title containing 'and', or two names a film stars, is not a comparison: the question stays whole."""
    assert split_question(question) == [question]


def test_an_english_clause_opening_with_a_preposition_and_a_wh_word_is_a_part_of_its_own() -> None:
    """ ", and on which floor …?" asks something of its own: the question splits there, nothing distributed."""
    assert split_question(
        "Incidents are escalated to which group's lead, and on which floor does that group sit?"
    ) == [
        "Incidents are escalated to which group's lead",
        "on which floor does that group sit",
    ]
