"""The `kb gaps --html` page: self-contained (inline CSS and SVG, no script, nothing fetched), opens offline.

The bars are inline SVG drawn by hand, as in the `kb eval --html` page, because the page must render with
no network and no JavaScript library; every question, missing part and document name is HTML-escaped.
"""

from __future__ import annotations

import html
import time

from core.insights.finder import GapReport
from core.insights.gaps import Gap

BAR_MAX = 360  # pixels of the most asked topic's bar
REASON_LABELS = {
    "notice": "uncertainty notice",
    "unsupported": "unsupported claim",
    "thumbs_down": "thumbs-down",
}


def _date(epoch: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(epoch))


def headline(report: GapReport) -> str:
    """One line: how many answered questions are gaps, in how many topics, since when."""
    gaps = sum(gap.count for gap in report.gaps)
    line = (
        f"{gaps} of {report.answered} answered question(s) since {_date(report.since)} are gaps, "
        f"in {len(report.gaps)} topic(s)"
    )
    if report.truncated:
        line += f" (only the newest {report.answered} answered questions were read)"
    return line


def _bars(gaps: tuple[Gap, ...]) -> str:
    """Each topic's count as a horizontal bar, labelled with its first example."""
    if not gaps:
        return ""
    most = max(gap.count for gap in gaps)
    row, width = 22, BAR_MAX + 420
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{row * len(gaps) + 8}" role="img" '
        'aria-label="questions per topic">'
    ]
    for number, gap in enumerate(gaps):
        y = 4 + number * row
        bar = max(2.0, BAR_MAX * gap.count / most)
        label = f"{number + 1}. {gap.examples[0] if gap.examples else ''}"
        parts.append(
            f'<rect x="0" y="{y}" width="{bar:.1f}" height="{row - 6}" fill="#d64545">'
            f"<title>{html.escape(label)}: {gap.count}</title></rect>"
            f'<text x="{bar + 6:.1f}" y="{y + row - 10}" font-size="12">{gap.count} · {html.escape(label[:60])}'
            "</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _items(title: str, lines: tuple[str, ...]) -> str:
    if not lines:
        return ""
    items = "".join(f"<li>{html.escape(line)}</li>" for line in lines)
    return f"<h3>{html.escape(title)}</h3><ul>{items}</ul>"


def _topic(number: int, gap: Gap) -> str:
    reasons = ", ".join(f"{REASON_LABELS.get(name, name)} {count}" for name, count in gap.reasons.items())
    return (
        f'<section class="topic"><h2>{number}. {gap.count} question(s)</h2>'
        f'<p class="meta">{html.escape(reasons)} · last asked {_date(gap.last_asked)} · records '
        f"{html.escape(', '.join(str(i) for i in gap.record_ids[:10]))}</p>"
        f"{_items('Asked', gap.examples)}{_items('Judged missing', gap.missing)}"
        f"{_items('Closest documents', gap.documents)}</section>"
    )


def render_gaps_html(report: GapReport) -> str:
    """The whole page."""
    style = (
        "body{font-family:system-ui,'Noto Sans CJK SC',sans-serif;margin:24px;color:#1f2933;max-width:1100px}"
        ".topic{border:1px solid #d9dee3;border-radius:6px;padding:8px 16px;margin:12px 0}"
        ".topic h2{font-size:17px;margin:6px 0}.topic h3{font-size:13px;margin:8px 0 2px;color:#52606d}"
        ".meta{color:#52606d;font-size:12px}ul{margin:2px 0 6px}"
    )
    topics = "".join(_topic(number, gap) for number, gap in enumerate(report.gaps, start=1))
    body = topics or "<p>No gaps: every answered question was supported and none got a thumbs-down.</p>"
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>kb gaps</title><style>{style}</style></head><body>"
        f"<h1>What the knowledge base is missing</h1><p>{html.escape(headline(report))}</p>"
        f"{_bars(report.gaps)}{body}</body></html>"
    )
