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
from core.messages import text


def progress_text(event: Progress, lang: str) -> str | None:
    """The status line for a phase event; None for answer text, notices and final events."""
    if isinstance(event, ContextLoading):
        return text("progress.context", lang)
    if isinstance(event, Compacting):
        return text("progress.compacting", lang)
    if isinstance(event, Queued):
        return text("progress.queued", lang, n=event.position)
    if isinstance(event, Retrieving):
        return text("progress.retrieving", lang, round=event.round, query=event.query)
    if isinstance(event, Assessed):
        if event.sufficient:
            return text("progress.assessed_ok", lang)
        return text("progress.assessed_gap", lang, missing=event.missing or "-")
    if isinstance(event, Generating):
        return text("progress.generating", lang)
    if isinstance(event, AnswerDelta | Notice | Done | Failed):
        return None
    return None
