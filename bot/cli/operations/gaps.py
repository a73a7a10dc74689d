"""`kb gaps`: what the knowledge base is missing, from the questions that ended unsure or disliked.

Reads the answered records of the conversation store (since a time, in some datasets), keeps the gaps
(core.insights.gaps), embeds their questions with the offline encoder in a worker thread and groups them
by topic: per group the count, example questions, the parts judged missing and the documents its answers
cited (core.insights.finder, shared with the App Home). Text by default, `--json` for machines, `--html`
for a self-contained page.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import Any

from adapters.embedders.local import LocalEmbedder
from adapters.store.backends import open_store
from bot.cli.durations import parse_since
from bot.insights.gaps_html import headline, render_gaps_html
from bot.settings import Settings
from core.insights.finder import GapReport, find_gaps

DEFAULT_SINCE = "30d"


def register(commands: Any) -> None:
    """Add `kb gaps`."""
    parser = commands.add_parser(
        "gaps",
        help="what the knowledge base is missing: unsure or disliked answers grouped by topic",
        description="Group the questions whose answers carried an uncertainty notice, an unsupported claim "
        "or a thumbs-down by topic (the offline encoder), with counts, examples, the parts judged missing "
        "and the documents their answers cited.",
    )
    parser.add_argument(
        "--since", default=DEFAULT_SINCE, help="how far back: 24h, 7d, or a date (default 30d)"
    )
    parser.add_argument(
        "--dataset", action="append", default=[], help="only questions searched in it (repeatable)"
    )
    parser.add_argument("--json", action="store_true", help="print the groups as JSON")
    parser.add_argument(
        "--html", dest="html_path", metavar="FILE", help="also write a self-contained HTML page"
    )
    parser.set_defaults(handler=run)


def format_gaps(report: GapReport) -> str:
    """Each group: its count and reasons, examples, what was missing, the documents cited."""
    if not report.gaps:
        return f"no gaps among {report.answered} answered question(s)"
    gaps = report.gaps
    lines = [
        f"{sum(g.count for g in gaps)} of {report.answered} answered question(s) are gaps, "
        f"in {len(gaps)} topic(s):"
    ]
    if report.truncated:
        lines.append(f"(only the newest {report.answered} answered questions were read: narrow --since)")
    for number, gap in enumerate(gaps, start=1):
        reasons = ", ".join(f"{name} {count}" for name, count in gap.reasons.items())
        lines.append(f"\n{number}. {gap.count} question(s) ({reasons})")
        lines += [f"   asked: {example}" for example in gap.examples]
        lines += [f"   missing: {missing}" for missing in gap.missing]
        if gap.documents:
            lines.append(f"   closest documents: {', '.join(gap.documents)}")
    return "\n".join(lines)


async def run(args: argparse.Namespace, settings: Settings) -> int:
    """Print the gaps of the chosen period and datasets (and write the HTML page when asked)."""
    since = parse_since(args.since, time.time())
    wanted = sorted({name.strip() for name in args.dataset if name.strip()})
    async with await open_store(settings.storage.effective_database_url) as store:
        report = await find_gaps(store, LocalEmbedder(), since=since, datasets=wanted)
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False, indent=2))
    else:
        print(format_gaps(report))
    if args.html_path:
        page = render_gaps_html(report)
        await asyncio.to_thread(Path(args.html_path).write_text, page, encoding="utf-8")
        if not args.json:
            print(f"written: {args.html_path} ({headline(report)})")
    return 0
