"""The ExtractiveEngine as a whole: its name, the multi-hop vote, its settings, and a free event loop."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.extractive import ExtractiveEngine
from bot.sample_kb import SAMPLE_KB_DIR
from core.models import AnswerRequest, Turn, Usage
from tests.extractive.helpers import collect, hit, ticks_during

HANDBOOK = "\n\n".join(p.read_text(encoding="utf-8") for p in sorted(Path(SAMPLE_KB_DIR).glob("*.md")))


def test_name_is_extractive() -> None:
    """Records answered by this engine say 'extractive'."""
    assert ExtractiveEngine().name == "extractive"


@pytest.mark.parametrize("threshold", [0.0, -0.1, 1.5])
def test_coverage_threshold_outside_zero_to_one_is_rejected(threshold: float) -> None:
    """A coverage threshold must lie in (0, 1]."""
    with pytest.raises(ValueError, match="coverage_threshold"):
        ExtractiveEngine(coverage_threshold=threshold)


@pytest.mark.parametrize(
    "question",
    [
        "年假有几天，以及报销的截止期限是多久？",
        "北京和上海的住宿标准哪个更高？",
        "Which is older, the Eiffel Tower or the Statue of Liberty?",
        "How many remote days are allowed per week and what is the home office stipend?",
    ],
)
async def test_compound_and_comparison_questions_vote_multihop(question: str) -> None:
    """Compound questions and comparisons need more than one retrieval hop."""
    vote, usage = await ExtractiveEngine().vote_multihop(question)
    assert vote is True
    assert usage == Usage()


@pytest.mark.parametrize(
    "question", ["年假有几天？", "Java 有哪些基本数据类型？", "How many remote days per week are allowed?"]
)
async def test_simple_questions_vote_single_hop(question: str) -> None:
    """A question about one thing is answered by one retrieval."""
    vote, _ = await ExtractiveEngine().vote_multihop(question)
    assert vote is False


async def test_jieba_work_leaves_the_event_loop_free() -> None:
    """Answering and summarising run jieba in worker threads: a 1 ms ticker keeps ticking meanwhile."""
    engine = ExtractiveEngine()
    evidence = tuple(hit(i, HANDBOOK, f"copy{i}.md") for i in range(40))
    request = AnswerRequest(question="年假有几天，以及报销的截止期限是多久？", evidence=evidence)
    turns = [Turn(i, f"第 {i} 个问题？", HANDBOOK) for i in range(1, 11)]
    # jieba loads its dictionary and HMM tables once; keep that outside the measurement.
    await engine.summarise("", [Turn(0, "预热", "林远航在 2025 年入职。")], max_tokens=100)

    answer_ticks, answer_seconds = await ticks_during(lambda: collect(engine.answer(request)))
    summary_ticks, summary_seconds = await ticks_during(lambda: engine.summarise("", turns, max_tokens=500))

    assert answer_seconds > 0.05 and summary_seconds > 0.05  # enough work that blocking would show
    assert answer_ticks >= 5
    assert summary_ticks >= 5
