"""The one-line trace summary under every answer ("检索 3 轮 · 未发现新增资料 · 上下文: 已压缩 3 轮, 保留近期 1 轮原文")."""

from __future__ import annotations

from core.messages import text
from core.models import ContextStats
from core.record import RecordDetails


def _context_part(context: ContextStats | None, lang: str) -> str | None:
    if context is None or not context.enabled:
        return None
    compacted = context.compacted_rounds or 0
    recent = context.recent_rounds or 0
    if compacted:
        return text("summary.context_compacted", lang, compacted=compacted, recent=recent)
    if recent:
        return text("summary.context_recent", lang, recent=recent)
    return None


def trace_summary(details: RecordDetails, lang: str) -> str:
    """One line: rounds, stop reason, escalation/route and context statistics."""
    trace = details.trace
    rounds = len(trace.rounds) if trace is not None else 0
    parts = [text("summary.one_round" if rounds == 1 else "summary.rounds", lang, rounds=rounds)]
    if trace is not None:
        parts.append(trace.stop_label(lang) or "-")
    if trace is not None and trace.escalated:
        parts.append(text("summary.escalated", lang))
    context = _context_part(details.context, lang)
    if context:
        parts.append(context)
    if details.engine.startswith("extractive"):
        parts.append(text("summary.extractive", lang))
    return " · ".join(parts)
