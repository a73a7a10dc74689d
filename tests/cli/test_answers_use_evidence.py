"""`kb ask` as a subprocess over a small handbook: the offline answer quotes the sentence that answers each
part (a number asked for, a deadline), never "not found" for a part its cited paragraph answers; the search
for a missing part is a phrase of the question, never a stop word; citations of one section show their
article."""

from __future__ import annotations

import json
import re

import pytest

from core.text import STOP_WORDS_EN
from tests.cli.cli_support import clean_env, kb, prepare_home

LEAVE = (
    "# 休假制度\n\n## 年假\n\n员工入职满一年后享有带薪年假。工龄满十年的员工每年年假十天。"
    "年假须提前一周在系统中申请。\n\n## 病假\n\n病假须提交医院证明。\n"
)
EXPENSES = (
    "# Expenses\n\nExpenses are claimed in the finance portal. Receipts are kept for seven years. "
    "Claims must be filed within 30 days of the purchase.\n"
)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A KB_HOME with the leave rules (Chinese) and the expense rules (English) as one dataset."""
    root = tmp_path_factory.mktemp("answers")
    docs = root / "docs"
    docs.mkdir()
    (docs / "leave.md").write_text(LEAVE, encoding="utf-8")
    (docs / "expenses.md").write_text(EXPENSES, encoding="utf-8")
    return clean_env(prepare_home(root / "home", ("ingest", str(docs), "--dataset", "hr")))


def test_the_answer_quotes_the_sentence_stating_the_number_asked_for(env: dict[str, str]) -> None:
    """ "几天" is answered by the sentence that states ten days, cited, not only by the section's opening,
    and nothing is said to be missing."""
    result = kb(env, "ask", "工龄满十年的员工每年有几天年假？", "--dataset", "hr", "--json")
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert re.search(r"工龄满十年的员工每年年假十天。 \[\d\]", record["answer"]), record["answer"]
    assert "未找到" not in record["answer"] and not record["details"]["notice"]


def test_a_deadline_is_quoted_and_a_missing_part_is_searched_by_its_own_phrase(env: dict[str, str]) -> None:
    """The deadline part quotes "within 30 days"; the part the handbook lacks is searched again with content
    words of the question in its own order, never a query of stop words alone, and only that part is missing."""
    question = "How many days do I have to file an expense claim, and what is the office Wi-Fi password?"
    result = kb(env, "ask", question, "--dataset", "hr", "--json")
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert "Claims must be filed within 30 days of the purchase." in record["answer"]
    trace = record["details"]["trace"]
    queries = [query for step in trace["rounds"] for query in step["queries"]][1:]
    assert queries and any("Wi-Fi password" in query for query in queries), queries
    asked = re.findall(r"[\w-]+", question.lower())
    for query in queries:
        words = [word for word in re.findall(r"[\w-]+", query.lower()) if word not in STOP_WORDS_EN]
        assert words and all(word in asked for word in words), query  # the question's own content words
        assert [asked.index(word) for word in words] == sorted(asked.index(word) for word in words), query
    assert "Wi-Fi" in record["details"]["notice"] and "expense" not in record["details"]["notice"].lower()


def test_citations_of_one_section_show_the_article_that_tells_them_apart(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Two articles of one long section are two chunks with the same document and heading: `kb ask` lists each
    source with its article (第一条, 第四条) before the shared heading."""
    filler = "本条所称员工包括试用期员工和正式员工，具体办法由人事部另行规定并公布执行。" * 6
    articles = [
        "第一条 员工的年假按工龄计算，工龄满一年的员工每年年假五天。",
        "第二条 员工的病假须提交医院证明，病假期间工资按八折发放。",
        "第三条 员工的事假每次不超过三天，事假期间不发工资。",
        "第四条 员工的婚假为十天，婚假须在登记后一年内休完。",
    ]
    root = tmp_path_factory.mktemp("articles")
    docs = root / "docs"
    docs.mkdir()
    text = "# 休假规定\n\n## 假期\n\n" + "\n\n".join(article + filler for article in articles) + "\n"
    (docs / "leave.md").write_text(text, encoding="utf-8")
    env = clean_env(prepare_home(root / "home", ("ingest", str(docs), "--dataset", "hr")))
    result = kb(env, "ask", "员工的年假有几天？婚假有几天？", "--dataset", "hr")
    assert result.returncode == 0, result.stderr
    sources = result.stdout.split("来源:")[1].splitlines()
    assert "[1] leave 第一条 — 休假规定 > 假期" in sources and "[2] leave 第四条 — 休假规定 > 假期" in sources
