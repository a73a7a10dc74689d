"""Following references through real Chroma: a cited article of another document, and a page named by title."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.extractive import ExtractiveEngine
from bot.cli import main as kb_main
from bot.compose import build_services
from bot.settings import Settings
from core.answering.trace_view import render_trace_text
from core.commands import Ask
from core.events import Done
from core.models import ConversationKey, ConversationScope

TRAVEL_RULES = """# 出差管理办法

## 第一章 总则

第一条 为了规范公司员工出差行为，制定本办法。

第二条 员工出差应当事先提交出差申请，经部门负责人批准。

第三条 出差人员的住宿标准，依照《差旅费用标准》第五条执行。

第四条 出差结束后十个工作日内办理报销。
"""

RATES = """# 差旅费用标准

## 第二章 费用

第四条 城市间交通费按照实际发生的票据凭证报销。

第五条 一线城市每晚不超过六百元，其他城市每晚不超过四百元。

第六条 伙食补助每人每天一百元。
"""

DIRECTOR = """# Ada Lindqvist

Ada Lindqvist is a Norwegian film director and screenwriter, born in Tromsø in 1979.
"""

FILM = """# The Northern Lights Archive

The Northern Lights Archive is a 2016 mystery film directed by Ada Lindqvist and produced in Oslo.
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A KB_HOME with the dataset "refs": two Chinese rule books (one citing the other) and two English pages."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in (("出差管理办法.md", TRAVEL_RULES), ("差旅费用标准.md", RATES)):
        (docs / name).write_text(text, encoding="utf-8")
    (docs / "ada.md").write_text(DIRECTOR, encoding="utf-8")
    (docs / "archive.md").write_text(FILM, encoding="utf-8")
    monkeypatch.setenv("KB_HOME", str(tmp_path / "home"))
    assert kb_main(["ingest", str(docs), "--dataset", "refs"]) == 0
    return tmp_path / "home"


async def _ask(text: str) -> tuple[Done, dict[str, str]]:
    """The question's final event, and the dataset's document names by id."""
    async with build_services(Settings(), engine=ExtractiveEngine()) as services:
        key = ConversationKey(source="test", channel_id="refs")
        scope = ConversationScope(("refs",), retrieval_mode="multi")
        events = [event async for event in services.pipeline.ask(Ask(key, text, scope))]
        names = {d.document_id: d.name for d in await services.kb.list_documents("refs")}
    done = events[-1]
    assert isinstance(done, Done), done
    return done, names


async def test_a_cited_article_of_another_document_is_brought_into_the_evidence(home: Path) -> None:
    """The rule "依照《差旅费用标准》第五条", found by the search, brings that article of the other document in:
    traced as referenced, kept in the final evidence, though the search itself did not find it."""
    done, names = await _ask("出差人员的住宿标准依照什么执行？")
    trace = done.record.details.trace
    assert trace is not None
    referenced = [i for step in trace.rounds for i in step.referenced_ids]
    assert [names[i.split(":")[0]] for i in referenced] == ["差旅费用标准"]
    assert "(来自引用 1)" in render_trace_text(trace, "zh")
    assert set(referenced) <= set(done.record.details.evidence_ids)
    searched = {i for step in trace.rounds for i in step.new_paragraph_ids} - set(referenced)
    assert all(names[i.split(":")[0]] == "出差管理办法" for i in searched)


async def test_a_page_named_by_title_in_the_evidence_is_followed(home: Path) -> None:
    """The film page names its director, whose own page (titled by the name) joins the evidence as a reference."""
    done, names = await _ask("Where was the director of The Northern Lights Archive born?")
    trace = done.record.details.trace
    assert trace is not None
    referenced = [i for step in trace.rounds for i in step.referenced_ids]
    assert [names[i.split(":")[0]] for i in referenced] == ["ada"]
    assert "Tromsø" in (done.record.answer or "")


LONG_RATES = "# 差旅费用标准\n\n## 第二章 费用\n\n第五条 各地每晚费用上限如下：\n\n" + "\n\n".join(
    f"（{n}）第{n}类地区的宾馆每晚不超过{n}百元，超出部分由出差人员自行承担并在报销时说明原因。"
    for n in range(1, 13)
)


@pytest.fixture
def long_article_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A KB_HOME whose rule book cites 第五条 of a rate book in which that article fills two chunks."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "出差管理办法.md").write_text(TRAVEL_RULES, encoding="utf-8")
    (docs / "差旅费用标准.md").write_text(LONG_RATES, encoding="utf-8")
    monkeypatch.setenv("KB_HOME", str(tmp_path / "home"))
    assert kb_main(["ingest", str(docs), "--dataset", "refs"]) == 0
    return tmp_path / "home"


async def test_a_cited_article_split_over_chunks_is_brought_in_whole(long_article_home: Path) -> None:
    """ "依照《差旅费用标准》第五条" brings every chunk of that article when it is too long for one: the one
    opening it and the one continuing it (Location.within)."""
    done, names = await _ask("出差人员的住宿标准依照什么执行？")
    trace = done.record.details.trace
    assert trace is not None
    referenced = [i for step in trace.rounds for i in step.referenced_ids]
    assert [names[i.split(":")[0]] for i in referenced] == ["差旅费用标准", "差旅费用标准"]
    assert set(referenced) <= set(done.record.details.evidence_ids)
