"""The extractive compaction summary: questions and fact sentences, later corrections winning, within budget."""

from __future__ import annotations

import pytest

from adapters.extractive import ExtractiveEngine
from core.budget import count_tokens
from core.errors import ModelOutputInvalid
from core.models import Turn, Usage

LABEL = "（摘录式回答：未使用大模型，以下内容直接摘自资料）"


async def test_numbers_dates_and_names_are_kept_and_chatter_dropped() -> None:
    """Sentences with numbers, dates, names or quoted terms survive; labels, citations and filler do not."""
    turns = [
        Turn(
            1,
            "年假有几天？",
            f"{LABEL}\n\n- 工龄满 1 年不满 5 年：每年 10 天年假。 [1]\n- 年假需要提前申请。 [1]",
        ),
        Turn(2, "谁负责 VPN？", "VPN 由基础设施组负责，负责人为林远航。[2] 客户端叫「星河通」。[2]"),
        Turn(3, "结转的年假何时作废？", "结转的天数必须在 2025年3月31日 前休完。[1]"),
    ]
    summary, usage = await ExtractiveEngine().summarise("", turns, max_tokens=400)
    assert usage == Usage()
    for kept in ("问：年假有几天？", "每年 10 天年假", "林远航", "「星河通」", "2025年3月31日"):
        assert kept in summary
    for dropped in ("年假需要提前申请", "[1]", "[2]", "摘录式回答"):
        assert dropped not in summary


async def test_later_correction_wins() -> None:
    """A later turn restating the same fact with a different number replaces the earlier number."""
    turns = [
        Turn(1, "工龄 3 年的员工年假几天？", "工龄满 1 年不满 5 年：每年 10 天年假。"),
        Turn(2, "差旅补贴多少？", "国内出差每天补贴 100 元。"),
        Turn(3, "更正一下年假天数", "更正：工龄满 1 年不满 5 年：每年 12 天年假。"),
    ]
    summary, _ = await ExtractiveEngine().summarise("", turns, max_tokens=400)
    assert "每年 12 天年假" in summary
    assert "每年 10 天年假" not in summary
    assert "每天补贴 100 元" in summary


async def test_previous_summary_is_merged_and_corrected() -> None:
    """Facts in the previous summary are carried forward unless a new turn corrects them."""
    previous = "问：密码多久换一次？\n- 密码每 90 天必须更换一次。\n- 笔记本电脑每 3 年更换一次。"
    turns = [Turn(7, "密码现在多久换？", "Actually: 密码每 60 天必须更换一次。")]
    summary, _ = await ExtractiveEngine().summarise(previous, turns, max_tokens=400)
    assert "笔记本电脑每 3 年更换一次" in summary
    assert "60 天" in summary
    assert "90 天" not in summary
    assert summary.index("笔记本电脑") < summary.index("问：密码现在多久换？")


async def test_summary_fits_the_budget_and_keeps_the_latest_facts() -> None:
    """Over budget, the oldest lines go first; the result fits and still has the newest numbers."""
    turns = [
        Turn(
            i, f"第 {i} 个项目的预算是多少？", f"项目{i}号的预算为 {1000 * i} 元，截止日期是 2025年{i}月1日。"
        )
        for i in range(1, 13)
    ]
    summary, _ = await ExtractiveEngine().summarise("", turns, max_tokens=120)
    assert 0 < count_tokens(summary) <= 120
    assert "12000 元" in summary
    assert "2025年12月1日" in summary
    assert "项目1号" not in summary


async def test_english_turns_use_english_labels() -> None:
    """English turns are summarised with English question labels and their facts."""
    turns = [Turn(1, "What is the stipend?", "Nebula Tech pays a one-off stipend of 1,500 CNY. It is nice.")]
    summary, _ = await ExtractiveEngine().summarise("", turns, max_tokens=200)
    assert summary.splitlines() == [
        "Q: What is the stipend?",
        "- Nebula Tech pays a one-off stipend of 1,500 CNY.",
    ]


async def test_never_empty_when_turns_exist_even_with_a_tiny_budget() -> None:
    """A budget too small for one line still yields a non-empty (clipped) summary."""
    turns = [Turn(1, "这是一个非常长的问题" * 30, "没有任何数字的回答。")]
    summary, _ = await ExtractiveEngine().summarise("", turns, max_tokens=20)
    assert summary.strip()
    assert count_tokens(summary) <= 20


async def test_nothing_to_summarise_is_an_error() -> None:
    """No previous summary and no turns cannot produce a summary: the port's empty-output error."""
    with pytest.raises(ModelOutputInvalid):
        await ExtractiveEngine().summarise("", [], max_tokens=100)
