"""`kb gaps`: what the knowledge base is missing, from the questions that ended unsure or disliked.

Reads the answered records of the conversation store (since a time, in some datasets), keeps the gaps
(core.insights.gaps), embeds their questions with the offline encoder in a worker thread and groups them
by topic: per group the count, example questions, the parts judged missing and the documents its answers
cited. Text by default, `--json` for machines.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import time
from typing import Any

from adapters.embedders.local import LocalEmbedder
from adapters.store.backends import open_store
from bot.cli.knowledge.sources import parse_every
from bot.settings import Settings
from core.errors import InvalidInput
from core.insights.gaps import Gap, gap_reasons, group_by_topic, searched_datasets, summarise_gaps, topic_text
from core.messages import phrase

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
    parser.set_defaults(handler=run)


def parse_since(text: str, now: float) -> float:
    """Epoch seconds from a duration back from now ("7d") or a date ("2026-12-01", local midnight)."""
    try:
        return now - parse_every(text)
    except InvalidInput:
        pass
    try:
        return dt.datetime.fromisoformat(text.strip()).timestamp()
    except ValueError as error:
        raise InvalidInput(phrase("error.gaps_since")) from error


def format_gaps(gaps: list[Gap], asked: int) -> str:
    """Each group: its count and reasons, examples, what was missing, the documents cited."""
    if not gaps:
        return f"no gaps among {asked} answered question(s)"
    lines = [
        f"{sum(g.count for g in gaps)} of {asked} answered question(s) are gaps, in {len(gaps)} topic(s):"
    ]
    for number, gap in enumerate(gaps, start=1):
        reasons = ", ".join(f"{name} {count}" for name, count in gap.reasons.items())
        lines.append(f"\n{number}. {gap.count} question(s) ({reasons})")
        lines += [f"   asked: {example}" for example in gap.examples]
        lines += [f"   missing: {missing}" for missing in gap.missing]
        if gap.documents:
            lines.append(f"   closest documents: {', '.join(gap.documents)}")
    return "\n".join(lines)


async def run(args: argparse.Namespace, settings: Settings) -> int:
    """Print the gaps of the chosen period and datasets."""
    since = parse_since(args.since, time.time())
    wanted = {name.strip() for name in args.dataset if name.strip()}
    async with await open_store(settings.storage.effective_database_url) as store:
        records = await store.answered_since(since)
    if wanted:
        records = [r for r in records if wanted & set(searched_datasets(r))]
    gaps_found = [r for r in records if gap_reasons(r)]
    groups: list[list[int]] = []
    if gaps_found:
        vectors = await LocalEmbedder().embed_documents([topic_text(r) for r in gaps_found])  # unit length
        groups = await asyncio.to_thread(group_by_topic, vectors)
    gaps = summarise_gaps(gaps_found, groups)
    if args.json:
        payload = {"since": since, "answered": len(records), "gaps": [gap.to_json() for gap in gaps]}
        print(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        print(format_gaps(gaps, len(records)))
    return 0
