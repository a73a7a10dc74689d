"""`kb ask`, `kb chat`, `kb history` and `kb trace`: conversations from the terminal."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import uuid
from typing import Any

from bot.cli.render import ProgressPrinter, format_answer, record_json, record_lang
from bot.compose import Services, build_services, resolve_datasets
from bot.settings import Settings
from core.events import Done, Failed
from core.models import ConversationKey, DeliveryState, Question, Record
from core.text import detect_language


def register(commands: Any) -> None:
    """Add the conversation commands."""
    ask = commands.add_parser("ask", help="ask one question (progress on stderr, answer on stdout)")
    ask.add_argument("question", nargs="?", default="", help="the question (omit with --again)")
    _conversation_options(ask)
    ask.add_argument("--json", action="store_true", help="print the whole record as JSON")
    ask.add_argument(
        "--again",
        type=int,
        metavar="RECORD",
        help="answer this record's stored question again (needs --conversation)",
    )
    ask.set_defaults(handler=run_ask)

    chat = commands.add_parser("chat", help="an interactive conversation (/new, /trace, /quit)")
    _conversation_options(chat)
    chat.set_defaults(handler=run_chat)

    history = commands.add_parser("history", help="the questions and answers of a conversation")
    history.add_argument("conversation")
    history.set_defaults(handler=run_history)

    trace = commands.add_parser("trace", help="how an answer was found: rewrite, rounds, evidence")
    trace.add_argument("record", type=int)
    trace.add_argument("--json", action="store_true")
    trace.set_defaults(handler=run_trace)


def _conversation_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--conversation", help="continue this conversation (default: a new one)")
    parser.add_argument("--dataset", action="append", default=[], help="dataset to search (repeatable)")
    parser.add_argument("--mode", choices=["auto", "single", "multi"], help="retrieval mode")
    parser.add_argument("--search-mode", choices=["embedding", "keywords", "blend"])


def _key(conversation: str | None) -> ConversationKey:
    """A terminal conversation by name, or any stored conversation by its full id (slack:TEAM:CHANNEL:TS)."""
    parts = (conversation or "").split(":")
    if len(parts) == 4 and parts[0] and parts[0] != "cli":
        return ConversationKey(source=parts[0], team_id=parts[1], channel_id=parts[2], thread_ts=parts[3])
    return ConversationKey(source="cli", channel_id=conversation or uuid.uuid4().hex[:12])


def delivery_text(record: Record) -> str | None:
    """Where a chat record's reply stands: "delivered (3 attempts)", "failed after 30 attempts: not_in_channel"."""
    delivery = record.delivery
    if delivery is None:
        return None
    attempts = f"{delivery.attempts} attempt{'s' if delivery.attempts != 1 else ''}"
    if delivery.state == DeliveryState.FAILED:
        return f"failed after {attempts}: {delivery.error or 'unknown error'}"
    text = f"{delivery.state.value} ({attempts}"
    if delivery.error:
        text += f", last error {delivery.error}"
    if delivery.state != DeliveryState.DELIVERED and delivery.due:
        text += f", next try {time.strftime('%H:%M:%S', time.localtime(delivery.due))}"
    return text + ")"


async def _ask(
    services: Services,
    key: ConversationKey,
    text: str,
    args: argparse.Namespace,
    datasets: tuple[str, ...],
    *,
    stream: bool,
    again: int | None = None,
) -> Record | Failed:
    printer = ProgressPrinter(lang=detect_language(text), stream_answer=stream)
    question = Question(
        conversation=key,
        text=text,
        datasets=datasets,
        retrieval_mode=args.mode,
        search_mode=args.search_mode,
        re_chat_record_id=again,
    )
    async for event in services.pipeline.ask(question):
        printer.show(event)
        if isinstance(event, Done):
            return event.record
        if isinstance(event, Failed):
            return event
    raise RuntimeError("no final event")  # pragma: no cover


async def run_ask(args: argparse.Namespace, settings: Settings) -> int:
    """Answer one question; exit 0 when answered, 1 when it failed, 2 on bad input."""
    if args.again is not None and not args.conversation:
        print("--again needs --conversation (the record's conversation)", file=sys.stderr)
        return 2
    async with build_services(settings) as services:
        datasets = await resolve_datasets(services, args.dataset)
        key = _key(args.conversation)
        result = await _ask(services, key, args.question, args, datasets, stream=False, again=args.again)
        if isinstance(result, Failed):
            return 2 if result.record is None else 1
        print(record_json(result) if args.json else format_answer(result))
        if not args.conversation:
            print(
                f"(conversation: {key.channel_id} — continue with --conversation {key.channel_id})",
                file=sys.stderr,
            )
        return 0


async def run_chat(args: argparse.Namespace, settings: Settings) -> int:
    """Interactive session: every line is a question in the same conversation."""
    async with build_services(settings) as services:
        datasets = await resolve_datasets(services, args.dataset, sample_if_empty=True)
        key = _key(args.conversation)
        last: Record | None = None
        print(f"kb chat · datasets: {', '.join(datasets)} · /new /trace /quit", file=sys.stderr)
        while True:
            try:
                line = (await asyncio.to_thread(input, "> ")).strip()
            except EOFError:
                return 0
            if line in {"/quit", "/exit"}:
                return 0
            if line == "/new":
                key = _key(None)
                print(f"(new conversation {key.channel_id})", file=sys.stderr)
                continue
            if line == "/trace":
                print(_trace_text(last) if last else "(no answer yet)")
                continue
            if not line:
                continue
            result = await _ask(services, key, line, args, datasets, stream=False)
            if isinstance(result, Record):
                last = result
                print(format_answer(result))


async def run_history(args: argparse.Namespace, settings: Settings) -> int:
    """Print a conversation's records, oldest first."""
    async with build_services(settings) as services:
        conversation_id = await services.store.find_conversation(_key(args.conversation))
        records = await services.store.list_records(conversation_id) if conversation_id else []
        if not records:
            print(f"no records in conversation {args.conversation}", file=sys.stderr)
            return 1
        for record in records:
            print(f"#{record.id} [{record.status}] Q: {record.question}")
            if record.rewritten and record.rewritten != record.question:
                print(f"    rewritten: {record.rewritten}")
            if record.answer:
                print(f"    A: {record.answer}")
            delivered = delivery_text(record)
            if delivered:
                print(f"    delivery: {delivered}")
        return 0


def _trace_text(record: Record) -> str:
    from core.answering.trace_view import render_trace_text

    lang = record_lang(record)
    lines = [f"record {record.id} [{record.status}] · {record.question}"]
    if record.rewritten:
        lines.append(("改写后的问题: " if lang == "zh" else "rewritten: ") + record.rewritten)
    trace = record.details.get("trace")
    if trace:
        lines.append(render_trace_text(trace, lang))
    context = record.details.get("context")
    if context:
        lines.append(("上下文: " if lang == "zh" else "context: ") + json.dumps(context, ensure_ascii=False))
    for item in record.details.get("citations", []):
        lines.append(
            f"[{item['n']}] {item['document']} {item.get('heading', '')} ({item.get('paragraph_id', '')})"
        )
    if record.details.get("failure"):
        lines.append(f"failure: {record.details['failure']}")
    delivered = delivery_text(record)
    if delivered:
        lines.append(f"delivery: {delivered}")
    return "\n".join(lines)


async def run_trace(args: argparse.Namespace, settings: Settings) -> int:
    """Show what was searched for a record: rewrite, routing, rounds, stop reason, evidence."""
    async with build_services(settings) as services:
        record = await services.store.get_record(args.record)
        if record is None:
            print(f"record {args.record} not found", file=sys.stderr)
            return 1
        if args.json:
            print(json.dumps(record.details.get("trace", {}), ensure_ascii=False, indent=2))
        else:
            print(_trace_text(record))
        return 0
