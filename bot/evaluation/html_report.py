"""The `kb eval --html` page: self-contained (inline CSS and SVG, no script, nothing fetched), opens offline.

Charts are drawn as inline SVG bars by hand because the page must render with no network and no
JavaScript library; every text from questions, answers and documents is HTML-escaped.
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from bot.evaluation.report import ROWS, cell
from bot.evaluation.runner import QuestionResult
from bot.evaluation.summary import GroupSummary

SERIES = (
    ("baseline", "one search @10", "#9aa5b1"),
    ("final", "final evidence", "#2f6fdb"),
    ("cited", "cited in answer", "#1b9e5a"),
)
NOTICE_SERIES = (
    ("notice_expected", "notice where expected", "#1b9e5a"),
    ("false_notice", "notice where not expected", "#d64545"),
)
BAR_WIDTH = 18
GROUP_GAP = 26
CHART_HEIGHT = 180


def _bars(groups: Sequence[GroupSummary], series: Sequence[tuple[str, str, str]], title: str) -> str:
    """A grouped bar chart (0–100 %) of the given rates, one group per question type."""
    group_width = len(series) * BAR_WIDTH + GROUP_GAP
    width = max(50 + group_width * len(groups) + 20, 60 + 170 * len(series))
    top, bottom = 30, 40
    height = CHART_HEIGHT + top + bottom
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 24}" role="img" '
        f'aria-label="{html.escape(title)}">',
        f'<text x="4" y="16" font-size="13" font-weight="bold">{html.escape(title)}</text>',
    ]
    for tick in (0, 25, 50, 75, 100):
        y = top + CHART_HEIGHT * (1 - tick / 100)
        parts.append(f'<line x1="44" x2="{width - 10}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e3e7eb"/>')
        parts.append(f'<text x="40" y="{y + 4:.1f}" font-size="10" text-anchor="end">{tick}%</text>')
    for index, group in enumerate(groups):
        x0 = 50 + index * group_width
        for offset, (key, label, colour) in enumerate(series):
            rate = getattr(group, key)
            value = rate.value
            x = x0 + offset * BAR_WIDTH
            if value is None:
                continue
            bar = CHART_HEIGHT * value
            parts.append(
                f'<rect x="{x}" y="{top + CHART_HEIGHT - bar:.1f}" width="{BAR_WIDTH - 3}" '
                f'height="{bar:.1f}" fill="{colour}"><title>{html.escape(f"{group.name}: {label} {rate}")}'
                "</title></rect>"
            )
        label_x = x0 + len(series) * BAR_WIDTH / 2
        parts.append(
            f'<text x="{label_x:.1f}" y="{top + CHART_HEIGHT + 16}" font-size="11" text-anchor="middle">'
            f"{html.escape(group.name)}</text>"
        )
    legend_y = height + 10
    for offset, (_, label, colour) in enumerate(series):
        x = 50 + offset * 170
        parts.append(f'<rect x="{x}" y="{legend_y - 9}" width="10" height="10" fill="{colour}"/>')
        parts.append(f'<text x="{x + 14}" y="{legend_y}" font-size="11">{html.escape(label)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _summary_table(groups: Sequence[GroupSummary]) -> str:
    head = "".join(f"<th>{html.escape(group.name)}</th>" for group in groups)
    rows = []
    for key, label in ROWS:
        cells = "".join(f"<td>{html.escape(cell(group, key))}</td>" for group in groups)
        rows.append(f"<tr><th>{html.escape(label)}</th>{cells}</tr>")
    return f'<table class="summary"><tr><th></th>{head}</tr>{"".join(rows)}</table>'


def _marks(flags: Sequence[bool]) -> str:
    return "".join("●" if flag else "○" for flag in flags) or "—"


def _question_rows(results: Sequence[QuestionResult]) -> str:
    rows = []
    for result in results:
        notice = ("yes" if result.notice else "no") + (" (expected)" if result.expect_notice else "")
        rewritten = (
            f'<div class="rewritten">→ {html.escape(result.rewritten)}</div>'
            if result.rewritten and result.rewritten != result.question
            else ""
        )
        rows.append(
            "<tr>"
            f"<td>{html.escape(result.id)}</td><td>{html.escape(result.type)}</td>"
            f"<td>{html.escape(result.question)}{rewritten}</td>"
            f"<td>{html.escape(result.route)}{' ↑' if result.escalated else ''} · {result.rounds} · "
            f"{html.escape(result.stop_reason)}</td>"
            f"<td>{_marks(result.baseline_found)}</td><td>{_marks(result.final_found)}</td>"
            f"<td>{_marks(result.cited_found)}</td><td>{html.escape(notice)}</td>"
            f"<td>{html.escape(', '.join(result.cited_documents))}</td>"
            f"<td>{html.escape(result.error)}</td>"
            "</tr>"
        )
    head = (
        "<tr><th>id</th><th>type</th><th>question</th><th>route · rounds · stop</th><th>search</th>"
        "<th>final</th><th>cited</th><th>notice</th><th>cited documents</th><th>error</th></tr>"
    )
    return f'<table class="questions">{head}{"".join(rows)}</table>'


def render_html(
    title: str, subtitle: str, groups: Sequence[GroupSummary], results: Sequence[QuestionResult]
) -> str:
    """The whole page."""
    style = (
        "body{font-family:system-ui,'Noto Sans CJK SC',sans-serif;margin:24px;color:#1f2933}"
        "table{border-collapse:collapse;margin:12px 0;font-size:13px}"
        "th,td{border:1px solid #d9dee3;padding:4px 8px;text-align:left;vertical-align:top}"
        "table.summary td{text-align:right}.rewritten{color:#52606d;font-size:12px}"
        ".charts{display:flex;flex-wrap:wrap;gap:24px}"
    )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{style}</style></head><body>"
        f"<h1>{html.escape(title)}</h1><p>{html.escape(subtitle)}</p>"
        '<div class="charts">'
        f"{_bars(groups, SERIES, 'Gold paragraphs found')}"
        f"{_bars(groups, NOTICE_SERIES, 'Uncertainty notice')}"
        "</div>"
        f"<h2>Summary</h2>{_summary_table(groups)}"
        f"<h2>Questions</h2>{_question_rows(results)}"
        "</body></html>"
    )
