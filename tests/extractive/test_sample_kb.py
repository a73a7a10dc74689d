"""The sample knowledge base, and the extractive engine run over it directly (no vector store)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from adapters.extractive import ExtractiveEngine
from bot.sample_kb import DEMO_QUESTIONS, SAMPLE_KB_DIR
from core.models import AnswerRequest, Hit, Turn
from core.text import detect_language
from tests.extractive.helpers import collect

DOCS = sorted(Path(SAMPLE_KB_DIR).glob("*.md"))


def _chunks(markdown: str) -> list[tuple[str, str]]:
    """(heading, text) chunks: the project's Markdown chunker, or blank-line paragraphs without it."""
    try:
        from core.knowledge.chunking import chunk_markdown
    except ImportError:
        return [("", p.strip()) for p in markdown.split("\n\n") if p.strip()]
    return [(" / ".join(c.heading_path), c.text) for c in chunk_markdown(markdown)]


def _hits() -> list[Hit]:
    hits: list[Hit] = []
    for path in DOCS:
        for position, (heading, text) in enumerate(_chunks(path.read_text(encoding="utf-8"))):
            hits.append(
                Hit(
                    f"{path.stem}:{position}",
                    text,
                    1.0,
                    "sample",
                    path.stem,
                    path.name,
                    heading,
                    str(path),
                    position,
                )
            )
    return hits


HITS = _hits()


async def _answer(question: str, evidence: list[Hit], lang: str = "zh") -> str:
    _, completions = await collect(
        ExtractiveEngine().answer(AnswerRequest(question, tuple(evidence), lang=lang))
    )
    return completions[0].text


def _cited_documents(section: str, evidence: list[Hit]) -> set[str]:
    return {evidence[int(n) - 1].document_name for n in re.findall(r"\[(\d+)\]", section)}


def test_the_sample_kb_has_ten_short_documents_in_both_languages() -> None:
    """At least ten Markdown documents, Chinese and English, and nothing else that ingestion would read."""
    assert len(DOCS) >= 10
    others = {p.name for p in Path(SAMPLE_KB_DIR).iterdir()} - {p.name for p in DOCS}
    assert others <= {"__init__.py", "__pycache__"}  # the package marker is not ingestible
    languages = {detect_language(p.read_text(encoding="utf-8")) for p in DOCS}
    assert languages == {"zh", "en"}
    assert all(len(p.read_text(encoding="utf-8")) < 2000 for p in DOCS)


def test_the_documents_set_up_the_synonym_and_the_absent_answer() -> None:
    """ "JVM" appears nowhere (only "Java 虚拟机"), and no document mentions 2026 or a team-building budget."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in DOCS)
    assert "jvm" not in text.lower()
    assert "Java 虚拟机" in text
    assert "2026" not in text and "团建" not in text


async def test_compound_question_parts_are_answered_from_their_own_documents() -> None:
    """Over the whole handbook, the leave part cites 年假制度.md and the claim-deadline part cites 费用报销.md."""
    text = await _answer("年假有几天，以及报销的截止期限是多久？", HITS)
    leave, expenses = text.split("【年假有几天】")[1].split("【报销的截止期限是多久】")
    assert _cited_documents(leave, HITS) == {"年假制度.md"}
    assert "每年 10 天年假" in leave and "每年 20 天年假" in leave
    assert "费用报销.md" in _cited_documents(expenses, HITS)
    assert "30 天内" in expenses


async def test_compound_question_needs_a_second_round_for_the_other_document() -> None:
    """With only the leave document found, the gap names the claim deadline; adding 费用报销.md suffices."""
    engine = ExtractiveEngine()
    question = "年假有几天，以及报销的截止期限是多久？"
    leave_only = [h for h in HITS if h.document_name == "年假制度.md"]
    first, _ = await engine.assess(question, leave_only, [question])
    assert not first.sufficient
    assert first.queries == ("报销的截止期限是多久",)
    expenses = [h for h in HITS if h.document_name == "费用报销.md"]
    second, _ = await engine.assess(question, leave_only + expenses, [question, *first.queries])
    assert second.sufficient


async def test_demo_compound_question_asks_for_the_sick_leave_document_next() -> None:
    """The demo's three-part question found in 年假制度 and 费用报销 still lacks 病假, and asks for exactly it."""
    question = DEMO_QUESTIONS[0]
    found = [h for h in HITS if h.document_name in ("年假制度.md", "费用报销.md")]
    verdict, _ = await ExtractiveEngine().assess(question, found, [question])
    assert (verdict.sufficient, verdict.missing, verdict.queries) == (
        False,
        "缺少关于「病假有几天」的资料",
        ("病假有几天",),
    )
    sick = [h for h in HITS if h.document_name == "病假与其他假期.md"]
    final, _ = await ExtractiveEngine().assess(question, found + sick, [question, "病假有几天"])
    assert final.sufficient


async def test_pronoun_follow_up_is_rewritten_and_answered_with_sizes() -> None:
    """ "那它们各自占用多少内存" becomes a question about Java's primitive types, answered with byte sizes."""
    engine = ExtractiveEngine()
    history = [Turn(1, "Java 有哪些基本数据类型？", await _answer("Java 有哪些基本数据类型？", HITS))]
    assert "byte、short、int、long" in history[0].answer
    rewritten, _ = await engine.rewrite(history, "那它们各自占用多少内存？")
    assert "Java 基本数据类型" in rewritten
    text = await _answer(rewritten, HITS)
    assert _cited_documents(text, HITS) == {"Java基本数据类型.md"}
    assert "byte 占用 1 个字节" in text and "double 占用 8 个字节" in text


async def test_synonym_question_is_answered_from_the_java_virtual_machine_document() -> None:
    """A question saying "JVM" is answered from the document that only says "Java 虚拟机"."""
    text = await _answer("JVM 默认使用哪个垃圾回收器？", HITS)
    assert _cited_documents(text, HITS) == {"Java虚拟机垃圾回收.md"}
    assert "G1 是服务端默认的垃圾回收器" in text


@pytest.mark.parametrize("question", ["星河科技 2026 年的团建预算是多少？", "公司 2026 年的团建预算是多少？"])
async def test_absent_answer_is_reported_not_found(question: str) -> None:
    """Nothing in the handbook covers the 2026 team-building budget: insufficient, and the answer says so."""
    verdict, _ = await ExtractiveEngine().assess(question, HITS, [question])
    assert not verdict.sufficient
    text = await _answer(question, HITS)
    assert f"资料中未找到关于「{question.rstrip('？')}」的信息。" in text
    assert not re.search(r"\[\d+\]", text)


async def test_english_compound_question_over_the_english_documents() -> None:
    """Both English parts are answered, each from its own English document."""
    question = "How many remote days per week are allowed, and how fast must a P1 incident be acknowledged?"
    text = await _answer(question, HITS, lang="en")
    remote, on_call = text.split('On "how fast must a P1 incident be acknowledged":')
    assert _cited_documents(remote, HITS) == {"remote-work-policy.md"}
    assert "up to 2 days per week" in remote
    assert _cited_documents(on_call, HITS) == {"on-call-handbook.md"}
    assert "within 15 minutes" in on_call


def test_demo_questions_cover_the_scenarios() -> None:
    """The demo script's questions include the compound, the pronoun follow-up, the synonym and the gap."""
    joined = " ".join(DEMO_QUESTIONS)
    assert "以及" in joined and "它们" in joined and "JVM" in joined and "2026" in joined
