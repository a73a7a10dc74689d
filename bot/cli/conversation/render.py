"""Terminal rendering shared by `kb ask`, `kb chat`, `kb history` and `kb trace`."""

from __future__ import annotations

import json
import sys
import time
from typing import Any, TextIO

from adapters.slack.delivery.ledger import Delivery, DeliveryState
from bot.cli.texts import t
from core.answering.answer import contiguous_citations, render_sources
from core.answering.progress_text import progress_text
from core.answering.trace_summary import trace_summary
from core.answering.trace_view import render_trace_text
from core.events import AnswerDelta, Done, Failed, Notice, Progress
from core.models import ContextStats
from core.record import Record


def record_lang(record: Record) -> str:
    return record.details.lang or "zh"


def format_answer(record: Record) -> str:
    """Answer text, numbered sources and the one-line trace summary."""
    lang = record_lang(record)
    answer, items = contiguous_citations(record.answer or "", record.details.citations)
    parts = [answer.rstrip()]
    sources = render_sources(items, lang)
    if sources:
        parts.append(sources)
    parts.append(f"— {trace_summary(record.details, lang)} · record {record.id}")
    return "\n\n".join(parts)


def record_json(record: Record, delivery: Delivery | None = None) -> str:
    """The whole record as JSON, with its chat delivery (null for a record answered in the terminal)."""
    data: dict[str, Any] = {
        "id": record.id,
        "conversation_id": record.conversation_id,
        "question": record.question,
        "rewritten": record.rewritten,
        "answer": record.answer,
        "status": str(record.status),
        "details": record.details.to_json(),
        "delivery": None if delivery is None else delivery_json(delivery),
        "created_at": record.created_at,
        "updated_at": record.updated_at,
    }
    return json.dumps(data, ensure_ascii=False, indent=2)


PROGRESS_WIDTH = 160  # a progress line quotes at most this many characters of a query or a gap


def one_line(text: str, width: int = PROGRESS_WIDTH) -> str:
    """text on one line, cut with … after `width` characters (a long question is not echoed whole)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1].rstrip() + "…"


def context_text(context: ContextStats, lang: str) -> str:
    """The trace's context line: turns kept and compacted, estimated tokens against the budget."""
    if context.enabled is False:
        return t("context.disabled", lang)
    recent = context.recent_rounds or 0
    compacted = context.compacted_rounds or 0
    tokens, budget = context.estimated_tokens, context.token_budget
    parts = [t("context.recent", lang, recent=recent), t("context.compacted", lang, compacted=compacted)]
    if tokens is not None and budget:
        parts.append(t("context.tokens", lang, tokens=tokens, budget=budget))
    if context.compacted:
        parts.append(t("context.compacted_now", lang))
    if context.compaction_error:
        parts.append(t("context.compaction_failed", lang, error=context.compaction_error))
    return t("context.line", lang, parts=" · ".join(parts))


def delivery_json(delivery: Delivery) -> dict[str, Any]:
    """A delivery as --json shows it."""
    return {
        "state": delivery.state.value,
        "attempts": delivery.attempts,
        "error": delivery.error,
        "due": delivery.due,
        "parts": delivery.parts,
    }


def delivery_text(delivery: Delivery | None) -> str | None:
    """Where a chat record's reply stands: "delivered (3 attempts)", "failed after 30 attempts: not_in_channel"."""
    if delivery is None:
        return None
    attempts = f"{delivery.attempts} attempt{'s' if delivery.attempts != 1 else ''}"
    if delivery.state == DeliveryState.FAILED:
        return f"failed after {attempts}: {delivery.error or 'unknown error'}"
    text = f"{delivery.state.value} ({attempts}"
    if delivery.error:
        text += f", last error {delivery.error}"
    if delivery.state != DeliveryState.DELIVERED and delivery.due:
        text += f", next try {time.strftime('%H:%M:%S', time.localtime(delivery.due))}"
    return text + ")"


def format_trace(record: Record, delivery: Delivery | None = None) -> str:
    """Everything `kb trace` and chat's /trace show for a record, readable (--json has the raw trace)."""
    lang = record_lang(record)
    lines = [f"record {record.id} [{record.status}] · {one_line(record.question)}"]
    if record.rewritten:
        lines.append(t("trace.rewritten", lang, rewritten=record.rewritten))
    trace = record.details.trace
    if trace is not None:
        lines.append(render_trace_text(trace, lang))
    context = record.details.context
    if context is not None and context != ContextStats():  # an empty one says nothing
        lines.append(context_text(context, lang))
    _, items = contiguous_citations(record.answer or "", record.details.citations)
    for item in items:
        heading = f" {item.heading}" if item.heading else ""
        lines.append(f"[{item.n}] {item.document}{heading} ({item.paragraph_id})")
    for tied in record.details.attributions:
        if tied.how != "kept":  # a model's own right marker needs no line
            where = f"[{tied.source}]" if tied.source else "—"
            if tied.source and tied.meaning:  # tied by meaning: a sentence that rephrases its source
                where += t("trace.attribution.by_meaning", lang, similarity=f"{tied.meaning:.2f}")
            lines.append(
                t(f"trace.attribution.{tied.how}", lang, where=where, sentence=one_line(tied.sentence))
            )
    for quote in record.details.supplied:
        lines.append(
            t(
                "trace.supplied",
                lang,
                part=one_line(quote.part),
                where=f"[{quote.source}]",
                sentence=one_line(quote.sentence),
            )
        )
    for claim in record.details.unsupported:
        key = "trace.unsupported.name" if claim.kind == "name" else "trace.unsupported.number"
        lines.append(t(key, lang, claim=claim.text, sentence=one_line(claim.sentence)))
    if record.details.failure:
        lines.append(f"failure: {record.details.failure}")
    delivered = delivery_text(delivery)
    if delivered:
        lines.append(f"delivery: {delivered}")
    return "\n".join(lines)


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
            print(f"… {one_line(text)}", file=self.err, flush=True)
        elif isinstance(event, AnswerDelta) and self.stream_answer:
            self.out.write(event.text)
            self.out.flush()
            self.streamed = True
        elif isinstance(event, Notice) and event.kind == "degraded":
            print(f"! {event.text}", file=self.err, flush=True)
        elif isinstance(event, Failed):
            print(f"error: {event.message}", file=self.err, flush=True)
        elif isinstance(event, Done) and self.streamed:
            self.out.write("\n")
