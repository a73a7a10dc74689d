"""`kb chat`: an interactive conversation, with slash commands handled here and clean exits.

The prompt is read in the main thread while the event loop is idle (one asyncio.Runner runs each
question), so Ctrl-C at the prompt ends the session at once (exit 130) and Ctrl-D ends it with a
newline (exit 0); Ctrl-C while an answer is being written interrupts that answer only, marks its record
interrupted and returns to the prompt. A line starting with ``/`` and a word is a command; an unknown
command gets the list of commands instead of being sent to the knowledge base (``//text`` asks ``/text``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
import sys
from contextlib import AbstractAsyncContextManager
from typing import Any

from bot.cli.conversation.ask import ask_once, checked_question, conversation_options, scope_for
from bot.cli.conversation.render import ProgressPrinter, format_answer, format_trace
from bot.cli.conversation.selection import Conversation, choose_conversation, new_conversation
from bot.cli.outcome import EXIT_INTERRUPTED, current_state, error_line, interrupted_line
from bot.compose import Services, build_services, engine_notice, resolve_datasets
from bot.settings import Settings
from core.errors import KbError
from core.record import Record
from core.text import detect_language

COMMANDS = {
    "/new": "start a new conversation (/new NAME names it)",
    "/id": "print this conversation's id",
    "/trace": "how the last answer was found",
    "/help": "this list",
    "/quit": "leave (also /exit, Ctrl-D or Ctrl-C)",
}
_COMMAND = re.compile(r"^(/[A-Za-z?]+)(?:\s+(.*))?$")


def register(commands: Any) -> None:
    """Add `kb chat`."""
    chat = commands.add_parser(
        "chat",
        help="an interactive conversation (/new, /trace, /help, /quit)",
        description="Every line is a question in one conversation. "
        + "; ".join(f"{name}: {text}" for name, text in COMMANDS.items()),
    )
    conversation_options(chat)
    chat.set_defaults(handler=run_chat)


def parse_line(line: str) -> tuple[str, str] | None:
    """(command, argument) for a slash command, None for a question (`//x` is the question `/x`)."""
    if line.startswith("//"):
        return None
    match = _COMMAND.match(line)
    if match is None:
        return None
    return match.group(1).lower(), (match.group(2) or "").strip()


def help_text() -> str:
    return "\n".join(f"  {name:<7} {text}" for name, text in COMMANDS.items()) + (
        "\n  //text  ask a question that starts with '/'"
    )


class ChatSession:
    """One terminal session: the services, the current conversation and the last answer."""

    def __init__(self, runner: asyncio.Runner, args: argparse.Namespace, settings: Settings) -> None:
        self.runner = runner
        self.args = args
        self.settings = settings
        self.last: Record | None = None
        self.services: Services | None = None
        self.conversation: Conversation | None = None

    def run(self) -> int:
        opened: AbstractAsyncContextManager[Services] = build_services(self.settings)
        self.services = self.runner.run(opened.__aenter__())
        try:
            return self._loop()
        finally:
            self.runner.run(opened.__aexit__(None, None, None))

    def _start(self) -> None:
        services = self._services()
        conversation = self.runner.run(
            choose_conversation(services.store, reference=self.args.conversation, name=self.args.name)
        )
        self.conversation = conversation
        datasets = self.runner.run(self._datasets(conversation))
        notice = engine_notice(self.settings)
        if notice:
            print(notice, file=sys.stderr)
        state = "new" if conversation.is_new else "resumed"
        print(
            f"kb chat · conversation {conversation.id} ({state}) · datasets: {', '.join(datasets)} · "
            "/help for commands",
            file=sys.stderr,
        )

    async def _datasets(self, conversation: Conversation) -> tuple[str, ...]:
        services = self._services()
        if not (self.args.dataset or conversation.stored_scope):
            # With no dataset at all, the bundled sample handbook is loaded so the chat can start.
            await resolve_datasets(services, [], sample_if_empty=True)
        return (await scope_for(services, conversation, self.args)).datasets

    def _services(self) -> Services:
        assert self.services is not None
        return self.services

    def _loop(self) -> int:
        self._start()
        while True:
            try:
                line = input("> ").strip()
            except EOFError:
                print(file=sys.stderr)
                return 0
            except KeyboardInterrupt:
                print(file=sys.stderr)
                return EXIT_INTERRUPTED
            if not line:
                continue
            command = parse_line(line)
            if command is None:
                self._ask(line[1:] if line.startswith("//") else line)
            elif self._command(*command):
                return 0

    def _command(self, name: str, argument: str) -> bool:
        """Run a slash command; True when the session should end."""
        if name in {"/quit", "/exit", "/q"}:
            return True
        if name == "/new":
            self.conversation = new_conversation(name=argument or None)
            self.last = None
            print(f"(new conversation {self.conversation.id})", file=sys.stderr)
        elif name == "/id":
            print(self._conversation().id)
        elif name == "/trace":
            print(format_trace(self.last) if self.last else "(no answer yet)")
        elif name in {"/help", "/?"}:
            print(help_text())
        else:
            print(f"unknown command {name}; commands:\n{help_text()}", file=sys.stderr)
        return False

    def _conversation(self) -> Conversation:
        assert self.conversation is not None
        return self.conversation

    def _ask(self, text: str) -> None:
        state = current_state()
        state.record_id = None
        try:
            result = self.runner.run(self._answer(text))
        except KeyboardInterrupt:
            print(f"\n{interrupted_line(state)}", file=sys.stderr)
            return
        except KbError as error:
            print(error_line(error, state.lang), file=sys.stderr)
            return
        if isinstance(result, Record):
            self.last = result
            print(format_answer(result))

    async def _answer(self, text: str) -> Record | None:
        services = self._services()
        question = checked_question(text, max_tokens=self.settings.context.question_max_tokens)
        conversation = self._conversation()
        scope = await scope_for(services, conversation, self.args)
        if conversation.stored_scope is None:  # the pipeline stores it with this first question
            self.conversation = Conversation(conversation.key, scope, is_new=False)
        printer = ProgressPrinter(lang=detect_language(question), stream_answer=False)
        result = await ask_once(services, conversation.key, question, scope, printer=printer)
        return result if isinstance(result, Record) else None


def run_chat(args: argparse.Namespace, settings: Settings) -> int:
    """Interactive session: every line is a question in the same conversation (module docstring)."""
    if sys.stdin.isatty():
        with contextlib.suppress(ImportError):  # not every platform has it
            import readline  # noqa: F401  (line editing and history for input())
    with asyncio.Runner() as runner:
        return ChatSession(runner, args, settings).run()
