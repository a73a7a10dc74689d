"""Plain-text rendering of a retrieval trace (routing decision, rounds, stop reason, rerank) in zh or en."""

from __future__ import annotations

from collections.abc import Sequence

from core.messages import text
from core.trace import CarriedTerm, RetrievalTrace, RoundStep, RouteDecision


def _t(key: str, lang: str, **fields: object) -> str:
    return text(f"trace.{key}", lang, **fields)


def _yes_no(value: bool, lang: str) -> str:
    return _t("yes", lang) if value else _t("no", lang)


def _verdict(sufficient: bool, partial: bool, lang: str) -> str:
    return _t("partial", lang) if partial and not sufficient else _yes_no(sufficient, lang)


def _quoted(items: Sequence[str], lang: str) -> str:
    if not items:
        return _t("none", lang)
    return ", ".join(_t("quoted", lang, item=item) for item in items)


def _routing_line(decision: RouteDecision, lang: str) -> str:
    parts = [f"{_t('routing', lang)}: {_t(decision.decision, lang)}"]
    parts.append(f"{_t('source', lang)} {decision.source or '?'}")
    parts.append(f"{_t('rule', lang)} {decision.rule_score:.2f}")
    if decision.classifier_probability is not None:
        parts.append(f"{_t('classifier', lang)} {decision.classifier_probability:.2f}")
    if decision.model_vote is not None:
        vote = _t("multi", lang) if decision.model_vote else _t("single", lang)
        parts.append(f"{_t('vote', lang)} {vote}")
    if decision.reason:
        parts.append(f"{_t('reason', lang)}: {decision.reason}")
    return " · ".join(parts)


def carried_text(term: CarriedTerm, lang: str) -> str:
    """One carried term with where it came from, e.g. '"Ops guide" (from a document the answer of record 3
    cited)'."""
    origin = _t(f"origin.{term.origin}", lang, record_id=term.record_id)
    return f"{_t('quoted', lang, item=term.term)} ({origin})"


def _round_lines(step: RoundStep, lang: str) -> list[str]:
    header = _t("round", lang, n=step.round or "?")
    referenced = f" ({_t('referenced', lang)} {len(step.referenced_ids)})" if step.referenced_ids else ""
    lines = [
        f"{header}: {_t('queries', lang)} {_quoted(step.queries, lang)}",
        f"  {_t('new', lang)} {len(step.new_paragraph_ids)}{referenced} · "
        f"{_t('total', lang)} {step.total_evidence} · "
        f"{_t('sufficient', lang)} {_verdict(step.sufficient, step.partial, lang)}",
    ]
    if step.missing:
        lines.append(f"  {_t('missing', lang)}: {step.missing}")
    if step.next_queries:
        lines.append(f"  {_t('next', lang)}: {_quoted(step.next_queries, lang)}")
    return lines


def render_trace_text(trace: RetrievalTrace, lang: str) -> str:
    """A readable multi-line rendering of a trace (an older record's trace reads with defaults)."""
    head = f"{_t('mode', lang)}: {_t(trace.mode, lang)}"
    if trace.escalated:
        head += " " + _t("escalated", lang)
    lines = [head]
    if trace.datasets is not None:
        searched = ", ".join(trace.datasets) or _t("none", lang)
        if trace.search_mode:
            searched += f" · {_t('search_mode', lang)} {trace.search_mode}"
        lines.append(f"{_t('datasets', lang)}: {searched}")
    if trace.carried:
        carried = ", ".join(carried_text(term, lang) for term in trace.carried)
        lines.append(f"{_t('carried', lang)}: {carried}")
    if trace.complexity is not None:
        lines.append(_routing_line(trace.complexity, lang))
    if not trace.rounds:
        lines.append(_t("no_rounds", lang))
    for step in trace.rounds:
        lines.extend(_round_lines(step, lang))
    lines.append(f"{_t('stop', lang)}: {trace.stop_label(lang) or _t('none', lang)}")
    verdict = _verdict(trace.sufficient, trace.partial, lang)
    result = f"{_t('result', lang)}: {_t('sufficient', lang)} {verdict}"
    if trace.missing:
        result += f" · {_t('missing', lang)}: {trace.missing}"
    lines.append(result)
    rerank = trace.rerank
    if rerank is not None:
        text = (
            f"{_t('rerank', lang)}: {rerank.method or '?'} · "
            f"{_t('candidates', lang)} {rerank.candidates} · {_t('kept', lang)} {rerank.kept}"
        )
        if rerank.fallback_from:
            text += f" ({_t('fallback', lang)} {rerank.fallback_from}: {rerank.error})"
        lines.append(text)
    lines.append(f"{_t('time', lang)}: {trace.run_time:.2f} s")
    return "\n".join(lines)
