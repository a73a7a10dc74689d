"""The one-line trace summary under every answer ("检索 3 轮 · 未发现新增资料 · 上下文: 已压缩 3 轮, 保留近期 1 轮原文")."""

from __future__ import annotations

from typing import Any

from core.models import StopReason, stop_reason_label


def _stop_label(trace: dict[str, Any], lang: str) -> str:
    key = "stop_label_zh" if lang == "zh" else "stop_label_en"
    if trace.get(key):
        return str(trace[key])
    try:
        return stop_reason_label(StopReason(str(trace.get("stop_reason", ""))), lang)
    except ValueError:
        return str(trace.get("stop_reason", "-"))


def _context_part(context: dict[str, Any], lang: str) -> str | None:
    if not context or not context.get("enabled", False):
        return None
    compacted = int(context.get("compacted_rounds", 0) or 0)
    recent = int(context.get("recent_rounds", 0) or 0)
    if compacted:
        if lang == "zh":
            return f"上下文: 已压缩 {compacted} 轮, 保留近期 {recent} 轮原文"
        return f"context: {compacted} turns compacted, {recent} recent kept"
    if recent:
        return f"上下文: 近期 {recent} 轮" if lang == "zh" else f"context: {recent} recent turns"
    return None


def trace_summary(details: dict[str, Any], lang: str) -> str:
    """One line: rounds, stop reason, escalation/route and context statistics."""
    trace: dict[str, Any] = details.get("trace") or {}
    rounds = len(trace.get("rounds") or [])
    parts = [
        f"检索 {rounds} 轮" if lang == "zh" else f"Retrieval: {rounds} round{'s' if rounds != 1 else ''}"
    ]
    if trace:
        parts.append(_stop_label(trace, lang))
    if trace.get("escalated"):
        parts.append("单跳结果偏弱,已转多轮" if lang == "zh" else "escalated from single-hop")
    context = _context_part(details.get("context") or {}, lang)
    if context:
        parts.append(context)
    engine = str(details.get("engine", ""))
    if engine.startswith("extractive"):
        parts.append("摘录式回答" if lang == "zh" else "extractive answer")
    return " · ".join(parts)
