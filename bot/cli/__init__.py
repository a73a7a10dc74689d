"""The `kb` command line: one module per command group, each registering its sub-commands.

The groups live in three packages: ``conversation`` (ask, history, trace, chat, compact, context),
``knowledge`` (ingest, search, docs, datasets, sources) and ``operations`` (serve, demo, eval, classifier); ``outcome`` is
the one error path they all share.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from types import ModuleType
from typing import Any

from bot.cli.home import prepare_home
from bot.cli.outcome import run_command
from bot.logs import configure_logging
from bot.settings import Settings

Handler = Callable[[argparse.Namespace, Settings], Any]
DISTRIBUTION = "kb-slack-bot"
ENVIRONMENT_HELP = """\
environment (or the same names, lowercase, in the TOML file named by KB_CONFIG; see README):
  KB_HOME             data directory: Chroma, keyword indexes, SQLite (default ~/.kb)
  KB_DATABASE_URL     conversations: sqlite:///path (default: a file in KB_HOME) or postgresql://...
  KB_CHROMA_URL       a Chroma server, e.g. http://127.0.0.1:8000 (default: embedded in KB_HOME)
  KB_DATASETS         comma-separated datasets searched by default (default: all)
  OPENAI_BASE_URL, OPENAI_API_KEY, KB_CHAT_MODEL
                      an OpenAI-compatible model; without them answers are extractive (offline)
  KB_EMBEDDING_MODEL  embedding model of new datasets (default use-multilingual-v3, offline)
  KB_RETRIEVAL_MODE, KB_SEARCH_MODE   auto|single|multi, embedding|keywords|blend
  SLACK_BOT_TOKEN, SLACK_APP_TOKEN, SLACK_SIGNING_SECRET   for `kb serve`

exit status: 0 done, 1 a service failed or nothing was done, 2 bad input, 130 interrupted (Ctrl-C)
"""


def package_version() -> str:
    """The installed version of the project."""
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
        return "unknown"


# Each command and the module that registers it, in the order `kb --help` lists them.
COMMANDS: dict[str, str] = {
    "ingest": "knowledge.ingest",
    "search": "knowledge.search",
    "docs": "knowledge.docs",
    "datasets": "knowledge.datasets",
    "sources": "knowledge.sources",
    "ask": "conversation.ask",
    "history": "conversation.ask",
    "trace": "conversation.ask",
    "chat": "conversation.chat",
    "eval": "operations.eval",
    "compact": "conversation.compact",
    "context": "conversation.compact",
    "demo": "operations.demo",
    "serve": "operations.serve",
    "classifier": "operations.classifier",
    "doctor": "operations.doctor",
    "export": "operations.transfer",
    "import": "operations.transfer",
    "gaps": "operations.gaps",
}


def chosen_command(argv: Sequence[str]) -> str | None:
    """The command argv names (its first word that is not an option), when it is one of ours."""
    for word in argv:
        if word == "--":
            return None
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


def _command_modules(command: str | None = None) -> list[ModuleType]:
    """The modules registering `command` (every module when None).

    Imported lazily, and only the one a command needs (a command's start costs its own imports, not
    every command's: `kb ask` does not load Slack's or the model SDK's packages), so `kb --help` stays
    fast and one broken group does not hide the others.
    """
    import importlib

    names = [COMMANDS[command]] if command is not None else list(dict.fromkeys(COMMANDS.values()))
    modules = []
    for name in names:
        try:
            modules.append(importlib.import_module(f"bot.cli.{name}"))
        except ModuleNotFoundError as exc:
            if exc.name != f"bot.cli.{name}":
                raise
    return modules


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or only of `command` when named; each command module adds its
    sub-commands with set_defaults(handler=...)."""
    parser = argparse.ArgumentParser(
        prog="kb",
        description="Knowledge-base bot: ingest, search, ask, serve.",
        epilog=ENVIRONMENT_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="log debug details and tracebacks to stderr"
    )
    parser.add_argument("--version", action="version", version=f"kb {package_version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in _command_modules(command):
        module.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `kb` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(chosen_command(argv))
    args = parser.parse_args(argv)
    args.argv = argv  # the command as typed: a dataset's writer lock records it
    configure_logging(verbose=args.verbose)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    chosen = handler

    def run(parsed: argparse.Namespace, _: object) -> Any:
        settings = Settings()
        if settings.logs.format != "text":
            configure_logging(
                verbose=args.verbose, log_format=settings.logs.format, content=settings.logs.content
            )
        prepare_home(settings.storage.home)
        return chosen(parsed, settings)

    return run_command(run, args, None)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
