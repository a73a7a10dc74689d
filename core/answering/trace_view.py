"""Plain-text rendering of a retrieval trace (routing decision, rounds, stop reason, rerank) in zh or en."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.models import StopReason, stop_reason_label

_LABELS: dict[str, tuple[str, str]] = {
    "mode": ("检索方式", "Retrieval"),
    "datasets": ("知识库", "Datasets"),
    "search_mode": ("检索模式", "search mode"),
    "single": ("单次检索", "single search"),
    "multi": ("多轮检索", "multi-round"),
    "escalated": (
        "(单次检索未覆盖问题的每个部分,已升级为多轮)",
        "(escalated: the single search did not cover every part of the question)",
    ),
    "routing": ("复杂度判定", "Routing"),
    "source": ("来源", "source"),
    "rule": ("规则分", "rule score"),
    "classifier": ("分类器概率", "classifier"),
    "vote": ("模型投票", "model vote"),
    "reason": ("依据", "reason"),
    "round": ("第 {n} 轮", "Round {n}"),
    "queries": ("查询", "queries"),
    "new": ("新增段落", "new paragraphs"),
    "total": ("累计", "total"),
    "sufficient": ("充分", "sufficient"),
    "missing": ("缺口", "missing"),
    "next": ("下一轮查询", "next queries"),
    "stop": ("停止原因", "Stopped"),
    "result": ("结论", "Result"),
    "rerank": ("重排", "Rerank"),
    "candidates": ("候选", "candidates"),
    "kept": ("保留", "kept"),
    "fallback": ("回退自", "fallback from"),
    "time": ("耗时", "Time"),
    "yes": ("是", "yes"),
    "no": ("否", "no"),
    "none": ("无", "none"),
    "no_rounds": ("未执行检索", "no search was run"),
}


def _t(key: str, lang: str) -> str:
    zh, en = _LABELS[key]
    return zh if lang == "zh" else en


def _yes_no(value: Any, lang: str) -> str:
    return _t("yes", lang) if value else _t("no", lang)


def _quoted(items: Sequence[Any], lang: str) -> str:
    if not items:
        return _t("none", lang)
    return ", ".join(f"「{item}」" if lang == "zh" else f'"{item}"' for item in items)


def _stop_label(trace: Mapping[str, Any], lang: str) -> str:
    stored = trace.get("stop_label_zh" if lang == "zh" else "stop_label_en")
    if stored:
        return str(stored)
    try:
        return stop_reason_label(StopReason(str(trace.get("stop_reason", ""))), lang)
    except ValueError:
        return str(trace.get("stop_reason") or _t("none", lang))


def _routing_line(decision: Mapping[str, Any], lang: str) -> str:
    parts = [f"{_t('routing', lang)}: {_t(str(decision.get('decision', 'single')), lang)}"]
    parts.append(f"{_t('source', lang)} {decision.get('source', '?')}")
    if decision.get("rule_score") is not None:
        parts.append(f"{_t('rule', lang)} {float(decision['rule_score']):.2f}")
    if decision.get("classifier_probability") is not None:
        parts.append(f"{_t('classifier', lang)} {float(decision['classifier_probability']):.2f}")
    if decision.get("model_vote") is not None:
        vote = _t("multi", lang) if decision["model_vote"] else _t("single", lang)
        parts.append(f"{_t('vote', lang)} {vote}")
    if decision.get("reason"):
        parts.append(f"{_t('reason', lang)}: {decision['reason']}")
    return " · ".join(parts)


def _round_lines(step: Mapping[str, Any], lang: str) -> list[str]:
    header = _t("round", lang).format(n=step.get("round", "?"))
    lines = [
        f"{header}: {_t('queries', lang)} {_quoted(step.get('queries') or [], lang)}",
        f"  {_t('new', lang)} {len(step.get('new_paragraph_ids') or [])} · "
        f"{_t('total', lang)} {step.get('total_evidence', 0)} · "
        f"{_t('sufficient', lang)} {_yes_no(step.get('sufficient'), lang)}",
    ]
    if step.get("missing"):
        lines.append(f"  {_t('missing', lang)}: {step['missing']}")
    if step.get("next_queries"):
        lines.append(f"  {_t('next', lang)}: {_quoted(step['next_queries'], lang)}")
    return lines


def render_trace_text(trace: Mapping[str, Any], lang: str) -> str:
    """A readable multi-line rendering of a stored trace; tolerates missing keys from older records."""
    mode = str(trace.get("mode") or "single")
    head = f"{_t('mode', lang)}: {_t(mode if mode in ('single', 'multi') else 'single', lang)}"
    if trace.get("escalated"):
        head += " " + _t("escalated", lang)
    lines = [head]
    if trace.get("datasets") is not None:
        searched = ", ".join(str(name) for name in trace["datasets"]) or _t("none", lang)
        if trace.get("search_mode"):
            searched += f" · {_t('search_mode', lang)} {trace['search_mode']}"
        lines.append(f"{_t('datasets', lang)}: {searched}")
    decision = trace.get("complexity")
    if isinstance(decision, Mapping):
        lines.append(_routing_line(decision, lang))
    rounds = trace.get("rounds") or []
    if not rounds:
        lines.append(_t("no_rounds", lang))
    for step in rounds:
        if isinstance(step, Mapping):
            lines.extend(_round_lines(step, lang))
    lines.append(f"{_t('stop', lang)}: {_stop_label(trace, lang)}")
    result = f"{_t('result', lang)}: {_t('sufficient', lang)} {_yes_no(trace.get('sufficient'), lang)}"
    if trace.get("missing"):
        result += f" · {_t('missing', lang)}: {trace['missing']}"
    lines.append(result)
    rerank = trace.get("rerank")
    if isinstance(rerank, Mapping):
        text = (
            f"{_t('rerank', lang)}: {rerank.get('method', '?')} · "
            f"{_t('candidates', lang)} {rerank.get('candidates', 0)} · {_t('kept', lang)} {rerank.get('kept', 0)}"
        )
        if rerank.get("fallback_from"):
            text += f" ({_t('fallback', lang)} {rerank['fallback_from']}: {rerank.get('error', '')})"
        lines.append(text)
    if trace.get("run_time") is not None:
        lines.append(f"{_t('time', lang)}: {float(trace['run_time']):.2f} s")
    return "\n".join(lines)
