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


def _command_modules() -> list[ModuleType]:
    # Imported lazily so `kb --help` stays fast and one broken group does not hide the others.
    import importlib

    names = [
        "knowledge.ingest",
        "knowledge.search",
        "knowledge.docs",
        "knowledge.datasets",
        "knowledge.sources",
        "conversation.ask",
        "conversation.chat",
        "operations.eval",
        "conversation.compact",
        "operations.demo",
        "operations.serve",
        "operations.classifier",
        "operations.doctor",
        "operations.transfer",
        "operations.gaps",
    ]
    modules = []
    for name in names:
        try:
            modules.append(importlib.import_module(f"bot.cli.{name}"))
        except ModuleNotFoundError as exc:
            if exc.name != f"bot.cli.{name}":
                raise
    return modules


def build_parser() -> argparse.ArgumentParser:
    """The full parser; each command module adds its sub-commands with set_defaults(handler=...)."""
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
    for module in _command_modules():
        module.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `kb` console script."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
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
