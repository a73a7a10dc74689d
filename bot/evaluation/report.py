"""The `kb eval` table: one column per question type plus "all", one row per figure."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from bot.evaluation.runner import QuestionResult
from bot.evaluation.summary import ROLES, GroupSummary

MISSING_CHARS = 140  # a judged-missing text is shortened to this in the listing

ROWS: tuple[tuple[str, str], ...] = (
    ("questions", "questions (failed)"),
    ("baseline", "gold by one search @10"),
    ("final", "gold in final evidence"),
    ("any_round", "gold in any round"),
    ("cited", "gold cited in the answer"),
    ("baseline_all", "all gold by one search"),
    ("final_all", "all gold in final evidence"),
    ("cited_of_final", "cited / in final evidence"),
    ("keywords", "answer keywords present"),
    ("notice_expected", "notice where expected"),
    ("false_notice", "notice where not expected"),
    ("unhedged_miss", "no notice, no gold cited"),
    ("overruled", "model verdict overruled by key terms"),
    ("unsupported", "answers with unsupported claims"),
    ("attributed", "model sentences tied to a paragraph"),
    ("markers_corrected", "model markers corrected or removed"),
    ("left_out", "answers with left-out parts quoted"),
    ("mean_rounds", "mean rounds"),
    ("calls", "calls/question rw·vote·assess·sum·ans"),
    ("latency", "latency p50 / p95 (s)"),
    ("latency_unchecked", "latency p50 without claim check (s)"),
    ("routes", "routes"),
    ("sources", "route sources"),
)


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - _width(text))


def _mix(counts: dict[str, int]) -> str:
    return " ".join(f"{name} {count}" for name, count in sorted(counts.items(), key=lambda kv: -kv[1]))


def cell(group: GroupSummary, key: str) -> str:
    """One figure of one group as text."""
    if key == "questions":
        return f"{group.questions} ({group.failed})"
    if key == "mean_rounds":
        return f"{group.mean_rounds:.2f}"
    if key == "calls":
        return "·".join(f"{group.calls[role]:.2f}".rstrip("0").rstrip(".") or "0" for role in ROLES)
    if key == "latency":
        if group.latency_p50 is None or group.latency_p95 is None:
            return "—"
        return f"{group.latency_p50:.2f} / {group.latency_p95:.2f}"
    if key == "latency_unchecked":
        return "—" if group.latency_p50_unchecked is None else f"{group.latency_p50_unchecked:.2f}"
    if key == "routes":
        return _mix(group.routes)
    if key == "sources":
        return _mix(group.sources)
    return str(getattr(group, key))


def render_table(groups: Sequence[GroupSummary]) -> str:
    """The whole table as aligned text."""
    header = ["", *(group.name for group in groups)]
    rows = [[label, *(cell(group, key) for group in groups)] for key, label in ROWS]
    widths = [max(_width(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(_pad(text, widths[i]) for i, text in enumerate(header)).rstrip()]
    lines.append("  ".join("-" * width for width in widths))
    lines.extend("  ".join(_pad(text, widths[i]) for i, text in enumerate(row)).rstrip() for row in rows)
    return "\n".join(lines)


def render_missing(results: Sequence[QuestionResult]) -> str:
    """The parts judged missing on answerable questions (a notice where none was expected), per type: what
    to read first when the notice rate is high. Empty when there are none."""
    hedged = [r for r in results if r.notice and not r.expect_notice and r.status == "answered"]
    if not hedged:
        return ""
    lines = [f"judged missing where no notice was expected ({len(hedged)} of {len(results)}):"]
    for kind in dict.fromkeys(r.type for r in results):
        for result in (r for r in hedged if r.type == kind):
            missing = " ".join((result.missing or "(no part named)").split())
            if len(missing) > MISSING_CHARS:
                missing = missing[: MISSING_CHARS - 1] + "…"
            lines.append(f"  {kind:<10} {result.id}: {missing}")
    return "\n".join(lines)
