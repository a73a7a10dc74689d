"""The retrieval-trace modal: routing, every round, stop reason and context statistics, paginated (pure)."""

from __future__ import annotations

import json
from typing import Any

from slack_sdk.models.views import View

from adapters.slack.rendering.blocks import (
    MESSAGE_BLOCK_CHARS_MAX,
    MODAL_BLOCKS_MAX,
    VIEW_TITLE_MAX,
    Block,
    actions,
    block_chars,
    button,
    clip,
    context,
    divider,
    header,
    section,
    split_text,
)
from adapters.slack.rendering.final_messages import record_lang
from adapters.slack.rendering.mrkdwn import escape
from adapters.slack.rendering.texts import t
from core.answering.trace_summary import trace_summary
from core.answering.trace_view import carried_text
from core.models import ContextStats
from core.record import Record
from core.trace import RetrievalTrace, RoundStep

TRACE_CALLBACK = "kb_trace"
PAGE_ACTION_PREFIX = "kb_trace_page"


def _l(key: str, lang: str, **values: Any) -> str:
    return t(f"trace.{key}", lang, **values)


def _yes(value: Any, lang: str) -> str:
    return _l("yes", lang) if value else _l("no", lang)


def _or_dash(value: int | None) -> str:
    return "—" if value is None else str(value)


def _pairs(items: list[tuple[str, Any]]) -> str:
    return " · ".join(f"{name}: {escape(str(value))}" for name, value in items if value not in (None, ""))


def _routing(trace: RetrievalTrace, lang: str) -> str:
    decision = trace.complexity
    head: list[tuple[str, Any]] = [
        (_l("mode", lang), trace.mode),
        (_l("escalated", lang), _yes(trace.escalated, lang)),
    ]
    if decision is None:
        return f"*{_l('routing', lang)}*\n{_pairs(head)}"
    head += [(_l("decision", lang), decision.decision), (_l("source", lang), decision.source)]
    scores = [
        (_l("rule_score", lang), decision.rule_score),
        (_l("classifier", lang), decision.classifier_probability),
        (_l("vote", lang), decision.model_vote),
    ]
    lines = [
        f"*{_l('routing', lang)}*",
        _pairs(head),
        _pairs(scores),
        f"{_l('reason', lang)}: {escape(decision.reason)}" if decision.reason else "",
    ]
    return "\n".join(line for line in lines if line)


def _round(step: RoundStep, lang: str) -> str:
    queries = "\n".join(f"• {escape(q)}" for q in step.queries) or "—"
    new_ids = step.new_paragraph_ids
    lines = [
        f"*{_l('round', lang, n=step.round or '?')}*",
        f"{_l('queries', lang)}:\n{queries}",
        f"{_l('new', lang)}: {len(new_ids)}"
        + (f" ({escape(clip(', '.join(new_ids), 300))})" if new_ids else ""),
        f"{_l('total', lang)}: {step.total_evidence} · {_l('sufficient', lang)}: {_yes(step.sufficient, lang)}",
    ]
    if step.referenced_ids:
        lines.append(f"{_l('referenced', lang)}: {escape(clip(', '.join(step.referenced_ids), 300))}")
    if step.missing:
        lines.append(f"{_l('gap', lang)}: {escape(step.missing)}")
    if step.next_queries:
        lines.append(f"{_l('next', lang)}: " + "; ".join(escape(q) for q in step.next_queries))
    return "\n".join(lines)


def _context(ctx: ContextStats, lang: str) -> str:
    if ctx.enabled is False:
        return f"*{_l('context', lang)}*\n{_l('disabled', lang)}"
    budget = f"{_or_dash(ctx.estimated_tokens)} / {_or_dash(ctx.token_budget)}"
    stats = _pairs(
        [
            (_l("compacted", lang), ctx.compacted_rounds or 0),
            (_l("recent", lang), ctx.recent_rounds or 0),
            (_l("revision", lang), ctx.revision or 0),
            (_l("tokens", lang), budget),
            (_l("over", lang), _yes(ctx.threshold_exceeded, lang)),
            (_l("compaction_reason", lang), ctx.compaction_reason),
        ]
    )
    return f"*{_l('context', lang)}*\n{stats}"


def _sections(text: str) -> list[Block]:
    return [section(piece) for piece in split_text(text)]


def trace_blocks(record: Record) -> list[Block]:
    """Every block of the full trace, before pagination."""
    lang = record_lang(record)
    details = record.details
    trace = details.trace or RetrievalTrace()
    blocks: list[Block] = [header(clip(record.question.replace("\n", " "), 150))]
    summary = trace_summary(details, lang)
    if summary:
        blocks.append(context(escape(summary)))
    rewritten = trace.rewritten or record.rewritten
    if rewritten and rewritten != record.question:
        blocks.extend(_sections(f"*{_l('rewritten', lang)}*\n{escape(rewritten)}"))
    if trace.carried:
        carried = "\n".join(f"• {escape(carried_text(term, lang))}" for term in trace.carried)
        blocks.extend(_sections(f"*{_l('carried', lang)}*\n{carried}"))
    blocks.extend(_sections(_routing(trace, lang)))
    for step in trace.rounds:
        blocks.append(divider())
        blocks.extend(_sections(_round(step, lang)))
    blocks.append(divider())
    stop = trace.stop_label(lang) or "—"
    stop_text = (
        f"*{_l('stop', lang)}*: {escape(stop)} · {_l('sufficient', lang)}: {_yes(trace.sufficient, lang)}"
    )
    if trace.missing:
        stop_text += f"\n{_l('gap', lang)}: {escape(trace.missing)}"
    blocks.extend(_sections(stop_text))
    blocks.extend(_sections(_context(details.context or ContextStats(), lang)))
    rerank = trace.rerank
    reranked = f"{rerank.method or '?'} {rerank.kept}/{rerank.candidates}" if rerank else None
    footer = _pairs(
        [
            (_l("engine", lang), details.engine),
            (_l("rerank", lang), reranked),
            (_l("run_time", lang), trace.run_time),
        ]
    )
    if footer:
        blocks.append(context(footer))
    return blocks


def paginate(blocks: list[Block], *, per_page: int = MODAL_BLOCKS_MAX - 2) -> list[list[Block]]:
    """Pages of at most per_page blocks (room is left for the navigation block) and bounded text."""
    pages: list[list[Block]] = [[]]
    for block in blocks:
        page = pages[-1]
        too_long = sum(block_chars(b) for b in page) + block_chars(block) > MESSAGE_BLOCK_CHARS_MAX
        if page and (len(page) >= per_page or too_long):
            pages.append([])
        pages[-1].append(block)
    return pages


def trace_modal(record: Record, *, page: int = 0, per_page: int = MODAL_BLOCKS_MAX - 2) -> dict[str, Any]:
    """The modal view for one page of a record's trace (page is clamped into range)."""
    lang = record_lang(record)
    pages = paginate(trace_blocks(record), per_page=per_page)
    page = max(0, min(page, len(pages) - 1))
    blocks = list(pages[page])
    if len(pages) > 1:
        nav = []
        if page > 0:
            nav.append(
                button(
                    t("previous_page", lang),
                    action_id=f"{PAGE_ACTION_PREFIX}_prev",
                    value=f"{record.id}:{page - 1}",
                )
            )
        if page < len(pages) - 1:
            nav.append(
                button(
                    t("next_page", lang),
                    action_id=f"{PAGE_ACTION_PREFIX}_next",
                    value=f"{record.id}:{page + 1}",
                )
            )
        blocks.append(context(t("page", lang, page=page + 1, pages=len(pages))))
        blocks.append(actions(*nav, block_id="kb_trace_nav"))
    view = View(
        type="modal",
        callback_id=TRACE_CALLBACK,
        title=t("trace_title", lang)[:VIEW_TITLE_MAX],
        close=t("close", lang)[:VIEW_TITLE_MAX],
        private_metadata=json.dumps({"record": record.id, "page": page}),
        blocks=blocks,
    )
    return view.to_dict()
