"""Final Slack messages for a record: answer, notice, sources, trace summary and actions (pure)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from adapters.slack.rendering.blocks import (
    Block,
    SlackMessage,
    actions,
    button,
    clip,
    context,
    feedback_buttons,
    pack_messages,
    section,
    split_text,
)
from adapters.slack.rendering.mrkdwn import escape, link, to_mrkdwn
from adapters.slack.rendering.texts import failure_text, t
from core.answering.trace_summary import trace_summary
from core.messages import LANGUAGES
from core.models import RecordStatus
from core.record import CitedSource, Record
from core.text import detect_language

SHOW_TRACE = "kb_show_trace"
_MARKS = re.compile(r"[*_`#>~]+")
FEEDBACK = (
    "kb_feedback"  # Slack's feedback_buttons element; its values are "up:<record id>" / "down:<record id>"
)
FEEDBACK_UP = "kb_feedback_up"  # the plain buttons of answers posted before feedback_buttons (still handled)
FEEDBACK_DOWN = "kb_feedback_down"


def record_lang(record: Record | None, fallback_text: str = "") -> str:
    """The user's language: the record's details.lang, else detected from the question."""
    if record is not None:
        lang = record.details.lang
        if lang in LANGUAGES:
            return lang
        fallback_text = fallback_text or record.question
    return detect_language(fallback_text)


def split_notice(answer: str, notice: str | None) -> tuple[str, str]:
    """(answer without the notice, notice): the notice is shown in its own block, not twice."""
    notice = (notice or "").strip()
    if notice and notice in answer:
        head, _, tail = answer.rpartition(notice)
        answer = (head + tail).strip()
    return answer.strip(), notice


def source_lines(citations: Sequence[CitedSource]) -> list[str]:
    """ "[n] Document p. 12 › heading" lines (the location when the chunk has one), the document
    linked when its source is a URL; one per number."""
    lines: list[str] = []
    seen: set[str] = set()
    for index, citation in enumerate(citations, start=1):
        number = str(citation.n or index)
        if number in seen:
            continue
        seen.add(number)
        document = citation.document or "?"
        name = link(citation.source, document) if citation.is_web() else escape(document)
        label = citation.where()
        where = f" {escape(label)}" if label else ""
        heading = citation.heading
        lines.append(f"[{number}] {name}{where}" + (f" › {escape(heading)}" if heading else ""))
    return lines


def answer_actions(record_id: int, lang: str) -> list[Block]:
    """The "Show trace" button and Slack's native 👍/👎 feedback element of an answer (values carry the
    record id)."""
    value = str(record_id)
    return [
        actions(
            button(t("show_trace", lang), action_id=SHOW_TRACE, value=value),
            block_id=f"kb_answer_{record_id}",
        ),
        feedback_buttons(
            action_id=FEEDBACK,
            positive=(t("helpful", lang), f"up:{value}", t("helpful_label", lang)),
            negative=(t("not_helpful", lang), f"down:{value}", t("not_helpful_label", lang)),
            block_id=f"kb_feedback_{record_id}",
        ),
    ]


def feedback_value(value: str) -> tuple[str, int] | None:
    """("up" | "down", record id) from a feedback_buttons value "up:7"; None when it is not one."""
    verdict, _, record_id = value.partition(":")
    if verdict not in ("up", "down") or not record_id.isdigit():
        return None
    return verdict, int(record_id)


def answer_footer(record: Record, lang: str) -> list[Block]:
    """What follows the answer text: the notice, the sources, the trace summary line and the actions."""
    details = record.details
    _, notice = split_notice(record.answer or "", details.notice)
    footer: list[Block] = [section(piece) for piece in split_text("⚠️ " + to_mrkdwn(notice))] if notice else []
    sources = source_lines(details.citations)
    if sources:
        footer.extend(
            section(piece) for piece in split_text(f"*{t('sources', lang)}*\n" + "\n".join(sources))
        )
    summary = trace_summary(details, lang)
    if summary:
        footer.append(context(escape(summary)))
    footer.extend(answer_actions(record.id, lang))
    return footer


def answer_messages(record: Record) -> list[SlackMessage]:
    """The final answer as one or more thread messages; the first replaces the placeholder."""
    details = record.details
    lang = record_lang(record)
    answer, notice = split_notice(record.answer or "", details.notice)
    trusted = {c.source for c in details.citations if c.is_web()}
    body = [section(piece) for piece in split_text(to_mrkdwn(answer, trusted_urls=trusted))] or [section("…")]
    return pack_messages(body, answer_footer(record, lang), fallback=fallback_text(answer or notice))


def fallback_text(text: str) -> str:
    """A message's notification text: Markdown marks dropped, Slack's control characters escaped (it is
    mrkdwn too, so unescaped it could ping a channel or hide a link)."""
    return escape(_MARKS.sub("", text))


def notice_message(text: str) -> SlackMessage:
    """A plain one-section message (failures, interruptions, "no knowledge base here")."""
    return SlackMessage(text=clip(escape(text), 300), blocks=[section(escape(text))])


def pointer_message(lang: str) -> SlackMessage:
    """What a placeholder becomes when the answer had to be posted as a new message below it."""
    return notice_message(t("answer_below", lang))


def failure_message(record: Record, lang: str) -> SlackMessage:
    """The failure notice of a failed record: the text the user was shown, else one rebuilt from its code."""
    shown = record.details.user_message
    if shown:
        return notice_message(t("failed", lang, message=shown))
    code, _, message = (record.details.failure or "internal_error").partition(": ")
    if code in ("internal", "internal_error"):
        return notice_message(t("internal_error", lang))
    return notice_message(t("failed", lang, message=failure_text(code, message, {}, lang)))


def final_messages(record: Record) -> list[SlackMessage]:
    """The messages a finished record must end up showing in its thread (the first replaces the placeholder)."""
    lang = record_lang(record)
    if record.status == RecordStatus.ANSWERED:
        return answer_messages(record)
    if record.status == RecordStatus.INTERRUPTED:
        return [notice_message(t("interrupted", lang))]
    if record.status == RecordStatus.FAILED:
        return [failure_message(record, lang)]
    raise ValueError(f"record {record.id} is still pending: it has no final message yet")
