"""`kb ask`, `kb history` and `kb trace`: conversations from the terminal (`kb chat` is in chat.py)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from adapters.store.errors import record_not_found
from bot.cli.conversation.render import (
    ProgressPrinter,
    delivery_text,
    format_answer,
    format_trace,
    record_json,
)
from bot.cli.conversation.selection import (
    Conversation,
    choose_conversation,
    existing_conversation,
    question_scope,
)
from bot.cli.outcome import current_state
from bot.cli.texts import phrase
from bot.compose import Services, build_services, engine_notice
from bot.settings import Settings
from core.commands import Ask, AskAgain
from core.errors import InvalidInput, KbError
from core.events import Accepted, Done, Failed
from core.models import ConversationKey, ConversationScope
from core.record import Record
from core.text import detect_language
from core.validation import validate_question

EXIT_FAILED, EXIT_BAD_INPUT = 1, 2


def register(commands: Any) -> None:
    """Add `kb ask`, `kb history` and `kb trace`."""
    ask = commands.add_parser("ask", help="ask one question (progress on stderr, answer on stdout)")
    ask.add_argument("question", nargs="?", default="", help="the question (omit with --again)")
    conversation_options(ask)
    ask.add_argument("--json", action="store_true", help="print the whole record as JSON")
    ask.add_argument(
        "--again",
        type=int,
        metavar="RECORD",
        help="answer this record's stored question again (e.g. one that was interrupted)",
    )
    ask.set_defaults(handler=run_ask)

    history = commands.add_parser("history", help="the questions and answers of a conversation")
    history.add_argument(
        "conversation", help="conversation id as printed by kb ask/chat/demo, or a short form"
    )
    history.set_defaults(handler=run_history)

    trace = commands.add_parser("trace", help="how an answer was found: rewrite, rounds, evidence")
    trace.add_argument("record", type=int, help="record number (printed under every answer)")
    trace.add_argument("--json", action="store_true", help="print the stored trace as JSON")
    trace.set_defaults(handler=run_trace)


def conversation_options(parser: argparse.ArgumentParser) -> None:
    """The options `kb ask` and `kb chat` share: which conversation, what to search."""
    parser.add_argument(
        "--conversation",
        metavar="ID",
        help="continue this existing conversation (its id as printed, or a unique short form)",
    )
    parser.add_argument(
        "--name", help="continue the conversation of this name, or start it (default: a new conversation)"
    )
    parser.add_argument(
        "--dataset",
        action="append",
        default=[],
        help="dataset to search (repeatable; default: the conversation's, else KB_DATASETS, else all)",
    )
    parser.add_argument(
        "--mode",
        choices=["auto", "single", "multi"],
        help="retrieval mode (default: the conversation's, else KB_RETRIEVAL_MODE)",
    )
    parser.add_argument(
        "--search-mode",
        choices=["embedding", "keywords", "blend"],
        help="search mode (default: the conversation's, else KB_SEARCH_MODE)",
    )


def checked_question(text: str, *, max_tokens: int) -> str:
    """The question validated before anything is stored; a blank one is refused in both languages."""
    state = current_state()
    state.use_language_of(text)
    if not any(ch.isalpha() for ch in text or ""):
        state.lang = "both"
    return validate_question(text, max_tokens=max_tokens)


async def scope_for(
    services: Services, conversation: Conversation, args: argparse.Namespace
) -> ConversationScope:
    """The scope of the next question of conversation under these flags (unknown datasets refused)."""
    return await question_scope(
        services.kb,
        conversation,
        datasets=args.dataset,
        search_mode=args.search_mode,
        retrieval_mode=args.mode,
        default_datasets=services.settings.search.datasets,
    )


async def ask_once(
    services: Services,
    conversation: ConversationKey,
    text: str,
    scope: ConversationScope,
    *,
    again: int | None = None,
    printer: ProgressPrinter | None = None,
) -> Record | Failed:
    """Run one question through the pipeline, printing progress. On Ctrl-C the pipeline marks the record
    interrupted; its id is noted for the one-line message, and the interruption goes on up."""
    printer = printer or ProgressPrinter(lang=detect_language(text), stream_answer=False)
    command = (
        Ask(conversation=conversation, text=text, scope=scope)
        if again is None
        else AskAgain(conversation=conversation, record_id=again, scope=scope)
    )
    current_state().record_id = again
    async for event in services.pipeline.ask(command):
        printer.show(event)
        if isinstance(event, Accepted):
            current_state().record_id = event.record.id
        elif isinstance(event, Done):
            return event.record
        elif isinstance(event, Failed):
            return event
    raise RuntimeError("no final event")  # pragma: no cover


async def _again_target(services: Services, args: argparse.Namespace) -> tuple[Conversation, str]:
    """The conversation and stored question of the record --again names."""
    record = await services.store.get_record(args.again)
    if record is None:
        raise record_not_found(args.again)
    current_state().use_language_of(record.question)
    conversation = await existing_conversation(services.store, record.conversation_id)
    if args.conversation:
        named = await existing_conversation(services.store, args.conversation)
        if named.id != conversation.id:
            raise InvalidInput(
                phrase(
                    "error.record_elsewhere", record=record.id, named=named.id, conversation=conversation.id
                )
            )
    return conversation, record.question


async def run_ask(args: argparse.Namespace, settings: Settings) -> int:
    """Answer one question; exit 0 when answered, 1 when it failed, 2 on bad input."""
    if args.again is not None and args.question.strip():
        raise InvalidInput(phrase("error.again_with_question"))
    text = (
        args.question
        if args.again is not None
        else checked_question(args.question, max_tokens=settings.context.question_max_tokens)
    )
    async with build_services(settings) as services:
        if args.again is not None:
            conversation, text = await _again_target(services, args)
        else:
            conversation = await choose_conversation(
                services.store, reference=args.conversation, name=args.name
            )
        scope = await scope_for(services, conversation, args)
        notice = engine_notice(settings)
        if notice:
            print(notice, file=sys.stderr)
        conversation_id = conversation.id
        result = await ask_once(services, conversation.key, text, scope, again=args.again)
        if conversation.is_new:
            print(
                f"(conversation {conversation_id} — continue with: kb ask --conversation {conversation_id} …)",
                file=sys.stderr,
            )
        if isinstance(result, Failed):
            return EXIT_BAD_INPUT if result.record is None else EXIT_FAILED
        print(record_json(result) if args.json else format_answer(result))
        return 0


async def run_history(args: argparse.Namespace, settings: Settings) -> int:
    """Print a conversation's records, oldest first."""
    async with build_services(settings) as services:
        conversation = await existing_conversation(services.store, args.conversation)
        records = await services.store.list_records(conversation.id)
        deliveries = {record.id: await services.ledger.read_delivery(record.id) for record in records}
        print(f"conversation {conversation.id}")
        scope = conversation.stored_scope
        if scope is not None:
            print(f"datasets: {', '.join(scope.datasets) or '-'}")
        if not records:
            print("(no questions yet)")
        for record in records:
            print(f"#{record.id} [{record.status}] Q: {record.question}")
            if record.rewritten and record.rewritten != record.question:
                print(f"    rewritten: {record.rewritten}")
            if record.answer:
                print(f"    A: {record.answer}")
            delivered = delivery_text(deliveries[record.id])
            if delivered:
                print(f"    delivery: {delivered}")
        return 0


async def run_trace(args: argparse.Namespace, settings: Settings) -> int:
    """Show what was searched for a record: rewrite, routing, rounds, stop reason, evidence."""
    async with build_services(settings) as services:
        record = await services.store.get_record(args.record)
        if record is None:
            raise record_not_found(args.record)
        if args.json:
            trace = record.details.trace
            print(json.dumps(trace.to_json() if trace else {}, ensure_ascii=False, indent=2))
        else:
            print(format_trace(record, await services.ledger.read_delivery(record.id)))
        return 0


__all__ = ["KbError", "ask_once", "checked_question", "conversation_options", "scope_for"]
