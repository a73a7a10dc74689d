"""The one-line trace summary under every answer ("检索 3 轮 · 未发现新增资料 · 上下文: 已压缩 3 轮, 保留近期 1 轮原文")."""

from __future__ import annotations

from core.models import ContextStats
from core.record import RecordDetails


def _context_part(context: ContextStats | None, lang: str) -> str | None:
    if context is None or not context.enabled:
        return None
    compacted = context.compacted_rounds or 0
    recent = context.recent_rounds or 0
    if compacted:
        if lang == "zh":
            return f"上下文: 已压缩 {compacted} 轮, 保留近期 {recent} 轮原文"
        return f"context: {compacted} turns compacted, {recent} recent kept"
    if recent:
        return f"上下文: 近期 {recent} 轮" if lang == "zh" else f"context: {recent} recent turns"
    return None


def trace_summary(details: RecordDetails, lang: str) -> str:
    """One line: rounds, stop reason, escalation/route and context statistics."""
    trace = details.trace
    rounds = len(trace.rounds) if trace is not None else 0
    parts = [
        f"检索 {rounds} 轮" if lang == "zh" else f"Retrieval: {rounds} round{'s' if rounds != 1 else ''}"
    ]
    if trace is not None:
        parts.append(trace.stop_label(lang) or "-")
    if trace is not None and trace.escalated:
        parts.append("单跳结果偏弱,已转多轮" if lang == "zh" else "escalated from single-hop")
    context = _context_part(details.context, lang)
    if context:
        parts.append(context)
    if details.engine.startswith("extractive"):
        parts.append("摘录式回答" if lang == "zh" else "extractive answer")
    return " · ".join(parts)
