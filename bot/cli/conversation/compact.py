"""`kb compact` and `kb context`: compact a conversation's history on demand, and show its rolling summary."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from bot.settings import Settings
from core.conversation.compaction import (
    NO_UPPER_BOUND,
    PAGE_SIZE,
    CompactingContextLoader,
    compact_conversation,
)
from core.conversation.compaction_batches import turns_tokens
from core.conversation.compaction_messages import summary_message_tokens
from core.conversation.references import resolve_conversation
from core.models import CompactionReport, ContextSnapshot
from core.ports import ConversationLock, ConversationStore


class CompactionServices(Protocol):
    """The part of bot.compose's Services these commands use."""

    @property
    def store(self) -> ConversationStore: ...

    @property
    def lock(self) -> ConversationLock: ...

    @property
    def loader(self) -> CompactingContextLoader: ...

    @property
    def settings(self) -> Settings: ...


@dataclass(frozen=True, slots=True)
class ContextView:
    """What `kb context` shows: the stored snapshot and what waits after its watermark."""

    conversation_id: str
    snapshot: ContextSnapshot
    unsummarised_turns: int
    unsummarised_tokens: int
    budget: int

    @property
    def estimated_tokens(self) -> int:
        """Summary message plus unsummarised turns: what the next question would start from."""
        return summary_message_tokens(self.snapshot.summary) + self.unsummarised_tokens

    @property
    def next_question_compacts(self) -> bool:
        return self.estimated_tokens > self.budget


def register(commands: Any) -> None:
    """Add `kb compact` and `kb context`."""
    compact = commands.add_parser(
        "compact",
        help="merge a conversation's older turns into its summary (only when over the token budget)",
    )
    compact.add_argument(
        "conversation",
        help="conversation id as printed by kb ask/chat/demo (slack:T…:C…:ts for a thread), or a short form",
    )
    compact.set_defaults(handler=run_compact)

    context = commands.add_parser("context", help="show a conversation's summary, watermark and revision")
    context.add_argument(
        "conversation",
        help="conversation id as printed by kb ask/chat/demo (slack:T…:C…:ts for a thread), or a short form",
    )
    context.add_argument("--json", action="store_true", help="print the view as JSON")
    context.set_defaults(handler=run_context)


def format_report(report: CompactionReport) -> str:
    """One or two lines describing what a manual compaction did."""
    state = f"revision {report.revision}, {report.compacted_rounds} turns in the summary"
    if report.through_record_id:
        state += f" (through record #{report.through_record_id})"
    if report.compacted:
        calls = f"{report.summary_calls} summary call{'s' if report.summary_calls != 1 else ''}"
        return f"compacted: {state}; {calls}"
    if report.reason.startswith("failed"):
        code = report.reason.partition(":")[2].strip() or "error"
        return f"compaction failed ({code}); nothing was changed: {state}"
    reasons = {
        "under_budget": "nothing to compact, under budget",
        "no_history": "nothing to compact: the conversation has no answered turns",
        "no_older_turns": "nothing to compact: over budget, but only the recent turns remain "
        "(a long turn is clipped when sent instead)",
        "history_disabled": "nothing to compact: history is disabled (KB_DIALOGUE_NUMBER=0)",
    }
    return f"{reasons.get(report.reason, report.reason)}; {state}"


def format_context(view: ContextView) -> str:
    """The summary, watermark, revision and counts of a conversation, for humans."""
    snapshot = view.snapshot
    lines = [
        f"conversation: {view.conversation_id}",
        f"revision: {snapshot.revision}",
        f"watermark: record #{snapshot.through_record_id}"
        if snapshot.through_record_id
        else "watermark: none",
        f"turns in the summary: {snapshot.compacted_rounds}",
        f"turns after the watermark: {view.unsummarised_turns} (~{view.unsummarised_tokens} tokens)",
        f"estimated history: ~{view.estimated_tokens} of {view.budget} tokens"
        + (" — the next question compacts" if view.next_question_compacts else ""),
    ]
    lines.append("summary:" if snapshot.summary else "summary: (none)")
    if snapshot.summary:
        lines.extend(f"  {line}" for line in snapshot.summary.splitlines())
    return "\n".join(lines)


def context_json(view: ContextView) -> str:
    """The view as JSON (snapshot fields plus counts)."""
    data = {
        "conversation_id": view.conversation_id,
        **asdict(view.snapshot),
        "unsummarised_turns": view.unsummarised_turns,
        "unsummarised_tokens": view.unsummarised_tokens,
        "estimated_tokens": view.estimated_tokens,
        "token_budget": view.budget,
        "next_question_compacts": view.next_question_compacts,
    }
    return json.dumps(data, ensure_ascii=False, indent=2)


async def context_view(store: ConversationStore, conversation_id: str, *, budget: int) -> ContextView:
    """Read the snapshot and count the answered turns after its watermark, a page of 20 at a time."""
    snapshot = await store.read_context(conversation_id)
    cursor, turns, tokens = snapshot.through_record_id, 0, 0
    while page := await store.turns_after(
        conversation_id, after_id=cursor, before_id=NO_UPPER_BOUND, limit=PAGE_SIZE
    ):
        turns += len(page)
        tokens += turns_tokens(page)
        cursor = page[-1].record_id
    return ContextView(conversation_id, snapshot, turns, tokens, budget)


async def compact_command(services: CompactionServices, argument: str) -> int:
    """Compact one conversation under its lock and print the report; 1 when it failed.

    Raises NotFound (exit 2) for a conversation that does not exist.
    """
    conversation_id = await resolve_conversation(services.store, argument)
    report = await compact_conversation(conversation_id, loader=services.loader, lock=services.lock)
    print(format_report(report))
    return 1 if report.reason.startswith("failed") else 0


async def context_command(services: CompactionServices, argument: str, *, as_json: bool) -> int:
    """Print a conversation's context view; NotFound (exit 2) for an unknown conversation."""
    conversation_id = await resolve_conversation(services.store, argument)
    view = await context_view(services.store, conversation_id, budget=services.loader.budget)
    print(context_json(view) if as_json else format_context(view))
    return 0


async def run_compact(args: argparse.Namespace, settings: Settings) -> int:
    """`kb compact CONVERSATION`."""
    from bot.compose import build_services

    async with build_services(settings) as services:
        return await compact_command(services, args.conversation)


async def run_context(args: argparse.Namespace, settings: Settings) -> int:
    """`kb context CONVERSATION`."""
    from bot.compose import build_services

    async with build_services(settings) as services:
        return await context_command(services, args.conversation, as_json=args.json)
