"""Terminal rendering shared by `kb ask`, `kb chat`, `kb history` and `kb trace`."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from core.answering.answer import render_sources
from core.answering.progress_text import progress_text
from core.answering.trace_summary import trace_summary
from core.events import AnswerDelta, Done, Failed, Notice, Progress
from core.models import Record


def record_lang(record: Record) -> str:
    return str(record.details.get("lang", "zh"))


def format_answer(record: Record) -> str:
    """Answer text, numbered sources and the one-line trace summary."""
    lang = record_lang(record)
    parts = [(record.answer or "").rstrip()]
    sources = render_sources(record.details.get("citations", []), lang)
    if sources:
        parts.append(sources)
    parts.append(f"— {trace_summary(record.details, lang)} · record {record.id}")
    return "\n\n".join(parts)


def record_json(record: Record) -> str:
    """The whole record as JSON."""
    data: dict[str, Any] = {
        "id": record.id,
        "conversation_id": record.conversation_id,
        "question": record.question,
        "rewritten": record.rewritten,
        "answer": record.answer,
        "status": str(record.status),
        "details": record.details,
        "delivery": None if record.delivery is None else record.delivery.to_dict(),
        "created_at": record.created_at,
        "updated_at": record.updated_at,
    }
    return json.dumps(data, ensure_ascii=False, indent=2)


class ProgressPrinter:
    """Prints phase lines to stderr; with stream_answer, answer text goes to stdout as it arrives."""

    def __init__(
        self, *, lang: str, stream_answer: bool, err: TextIO | None = None, out: TextIO | None = None
    ) -> None:
        self.lang = lang
        self.stream_answer = stream_answer
        self.err = err or sys.stderr
        self.out = out or sys.stdout
        self.streamed = False

    def show(self, event: Progress) -> None:
        text = progress_text(event, self.lang)
        if text:
            print(f"… {text}", file=self.err, flush=True)
        elif isinstance(event, AnswerDelta) and self.stream_answer:
            self.out.write(event.text)
            self.out.flush()
            self.streamed = True
        elif isinstance(event, Notice) and event.kind == "degraded":
            print(f"! {event.text}", file=self.err, flush=True)
        elif isinstance(event, Failed):
            print(f"✗ {event.message}", file=self.err, flush=True)
        elif isinstance(event, Done) and self.streamed:
            self.out.write("\n")
