"""Plain-text rendering of retrieval traces in Chinese and English."""

from __future__ import annotations

from core.answering.trace_view import render_trace_text
from core.trace import RetrievalTrace

TRACE = {
    "mode": "multi",
    "escalated": True,
    "complexity": {
        "decision": "multi",
        "source": "model",
        "rule_score": 0.3275,
        "classifier_probability": None,
        "model_vote": True,
        "reason": "model voted multi",
    },
    "rounds": [
        {
            "round": 1,
            "queries": ["行政复议 期限"],
            "new_paragraph_ids": ["p1", "p2"],
            "total_evidence": 2,
            "sufficient": False,
            "missing": "缺少预算金额",
            "next_queries": ["某乡 2026 年 部门预算"],
        },
        {
            "round": 2,
            "queries": ["某乡 2026 年 部门预算"],
            "new_paragraph_ids": [],
            "total_evidence": 2,
            "sufficient": False,
            "missing": "缺少预算金额",
            "next_queries": [],
        },
    ],
    "stop_reason": "no_new_evidence",
    "stop_label_zh": "未发现新增资料",
    "stop_label_en": "no new evidence",
    "sufficient": False,
    "missing": "缺少预算金额",
    "rerank": {
        "method": "local",
        "candidates": 2,
        "kept": 2,
        "fallback_from": "http",
        "error": "model_unavailable",
    },
    "run_time": 1.234,
}


def test_chinese_rendering_shows_routing_rounds_stop_and_rerank() -> None:
    """The zh rendering names the route, each round's queries and gap, the stop label and the rerank."""
    text = render_trace_text(RetrievalTrace.from_json(TRACE), "zh")
    assert "多轮检索" in text and "已升级为多轮" in text
    assert "规则分 0.33" in text and "模型投票 多轮检索" in text
    assert "第 1 轮: 查询 「行政复议 期限」" in text and "第 2 轮" in text
    assert "缺口: 缺少预算金额" in text and "下一轮查询: 「某乡 2026 年 部门预算」" in text
    assert "停止原因: 未发现新增资料" in text
    assert "重排: local · 候选 2 · 保留 2 (回退自 http: model_unavailable)" in text
    assert "耗时: 1.23 s" in text


def test_english_rendering_uses_english_labels() -> None:
    """The en rendering uses the English stop label and English field names."""
    text = render_trace_text(RetrievalTrace.from_json(TRACE), "en")
    assert 'Round 2: queries "某乡 2026 年 部门预算"' in text
    assert "Stopped: no new evidence" in text and "Result: sufficient no" in text


def test_a_sparse_old_trace_still_renders() -> None:
    """A trace without complexity, rerank or labels renders with the label looked up from the reason."""
    text = render_trace_text(RetrievalTrace.from_json({"rounds": [], "stop_reason": "no_datasets"}), "en")
    assert "no search was run" in text and "Stopped: no knowledge base configured" in text
