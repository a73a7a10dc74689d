"""`kb demo`: ingest the sample handbook and run a scripted conversation, offline, in under a minute."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from bot.cli.conversation.render import ProgressPrinter, format_answer
from bot.cli.conversation.selection import new_conversation
from bot.compose import build_services, engine_notice
from bot.sample_data import ensure_sample_dataset
from bot.sample_kb import DEMO_QUESTIONS, SAMPLE_DATASET
from bot.settings import Settings
from core.commands import Ask
from core.events import Done, Failed
from core.models import ConversationScope
from core.text import detect_language

DEMO_OVERRIDES: dict[str, dict[str, Any]] = {
    # Small enough that the compound question needs a second round and compaction kicks in by turn 3.
    "context": {"recent_tokens": 512},
    "search": {"topk_short": 3, "topk_medium": 3, "topk_long": 3, "datasets": [SAMPLE_DATASET]},
    "agent": {"first_search_depth": 3},
}


def register(commands: Any) -> None:
    """Add `kb demo`."""
    demo = commands.add_parser("demo", help="run a scripted conversation over the bundled sample handbook")
    demo.set_defaults(handler=run_demo)


def demo_settings(settings: Settings) -> Settings:
    """The user's settings with the demo's own data directory and small budgets."""
    return settings.replace(**DEMO_OVERRIDES, storage={"home": settings.storage.home / "demo"})


async def run_demo(args: argparse.Namespace, settings: Settings) -> int:
    """Ingest the sample KB into its own dataset and ask the demo questions in one conversation."""
    started = time.monotonic()
    settings = demo_settings(settings)
    out = sys.stdout
    print(f"kb demo · data in {settings.storage.home} · dataset «{SAMPLE_DATASET}»", file=out)
    print(
        "demo settings: top 3 paragraphs per search, history budget 512 tokens (to show compaction)\n",
        file=out,
    )
    async with build_services(settings) as services:
        summary = await ensure_sample_dataset(services.kb, settings)
        print(f"ingested the sample handbook: {summary.line()}\n", file=out)
        notice = engine_notice(settings)
        if notice:
            print(notice, file=sys.stderr)
        conversation = new_conversation(source="demo")
        key = conversation.key
        conversation_id = conversation.id
        scope = ConversationScope(datasets=(SAMPLE_DATASET,))
        failures = 0
        for turn, text in enumerate(DEMO_QUESTIONS, start=1):
            print(f"━━ turn {turn} ━━ {text}", file=out, flush=True)
            printer = ProgressPrinter(lang=detect_language(text), stream_answer=False, err=out, out=out)
            async for event in services.pipeline.ask(Ask(conversation=key, text=text, scope=scope)):
                printer.show(event)
                if isinstance(event, Done):
                    record = event.record
                    if record.rewritten and record.rewritten != record.question:
                        print(f"… rewritten: {record.rewritten}", file=out)
                    print(f"\n{format_answer(record)}\n", file=out, flush=True)
                elif isinstance(event, Failed):
                    failures += 1
        report = await services.store.read_context(conversation_id)
        print(
            f"conversation {conversation_id} · summary revision {report.revision}, "
            f"{report.compacted_rounds} turns compacted (originals kept) · {time.monotonic() - started:.1f} s",
            file=out,
        )
        home = f"KB_HOME={settings.storage.home}"
        print(f"continue it: {home} kb chat --conversation {conversation_id}", file=out)
        print(f"look inside: {home} kb history {conversation_id} · kb context {conversation_id}", file=out)
    return 1 if failures else 0
