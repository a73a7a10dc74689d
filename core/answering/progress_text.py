"""Localized one-line descriptions of progress events, shared by every front end (CLI, Slack)."""

from __future__ import annotations

from core.events import (
    AnswerDelta,
    Assessed,
    Compacting,
    ContextLoading,
    Done,
    Failed,
    Generating,
    Notice,
    Progress,
    Queued,
    Retrieving,
)

_TEXTS = {
    "context": ("正在读取会话上下文…", "Reading the conversation context…"),
    "compacting": (
        "上下文 token 超出预算,正在压缩…",
        "Compacting the conversation context (over the token budget)…",
    ),
    "queued": ("前面还有 {n} 个问题,稍后回答…", "{n} question(s) ahead in this thread; waiting…"),
    "retrieving": ("第 {round} 轮检索:{query}", "Searching, round {round}: “{query}”"),
    "assessed_ok": ("资料已充分,准备回答…", "Evidence is sufficient; preparing the answer…"),
    "assessed_gap": ("仍缺少资料:{missing}", "Still missing: {missing}"),
    "generating": ("正在根据检索资料生成回答…", "Writing the answer from the retrieved sources…"),
}


def _pick(key: str, lang: str) -> str:
    zh, en = _TEXTS[key]
    return zh if lang == "zh" else en


def progress_text(event: Progress, lang: str) -> str | None:
    """The status line for a phase event; None for answer text, notices and final events."""
    if isinstance(event, ContextLoading):
        return _pick("context", lang)
    if isinstance(event, Compacting):
        return _pick("compacting", lang)
    if isinstance(event, Queued):
        return _pick("queued", lang).format(n=event.position)
    if isinstance(event, Retrieving):
        return _pick("retrieving", lang).format(round=event.round, query=event.query)
    if isinstance(event, Assessed):
        if event.sufficient:
            return _pick("assessed_ok", lang)
        return _pick("assessed_gap", lang).format(missing=event.missing or "-")
    if isinstance(event, Generating):
        return _pick("generating", lang)
    if isinstance(event, AnswerDelta | Notice | Done | Failed):
        return None
    return None
