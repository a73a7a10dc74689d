"""The one-line trace summary under every answer ("检索 3 轮 · 未发现新增资料 · 上下文: 已压缩 3 轮, 保留近期 1 轮原文")."""

from __future__ import annotations

from typing import Any

from core.messages import text
from core.trace import record_trace


# details (and its "context") are JSON: a record's details as stored.
def _context_part(context: dict[str, Any], lang: str) -> str | None:
    if not context or not context.get("enabled", False):
        return None
    compacted = int(context.get("compacted_rounds", 0) or 0)
    recent = int(context.get("recent_rounds", 0) or 0)
    if compacted:
        return text("summary.context_compacted", lang, compacted=compacted, recent=recent)
    if recent:
        return text("summary.context_recent", lang, recent=recent)
    return None


def trace_summary(details: dict[str, Any], lang: str) -> str:
    """One line: rounds, stop reason, escalation/route and context statistics."""
    trace = record_trace(details)
    rounds = len(trace.rounds) if trace is not None else 0
    parts = [text("summary.one_round" if rounds == 1 else "summary.rounds", lang, rounds=rounds)]
    if trace is not None:
        parts.append(trace.stop_label(lang) or "-")
    if trace is not None and trace.escalated:
        parts.append(text("summary.escalated", lang))
    context = _context_part(details.get("context") or {}, lang)
    if context:
        parts.append(context)
    engine = str(details.get("engine", ""))
    if engine.startswith("extractive"):
        parts.append(text("summary.extractive", lang))
    return " · ".join(parts)
