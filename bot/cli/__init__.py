"""The `kb` command line: one module per command group, each registering its sub-commands."""

from __future__ import annotations

import argparse
import asyncio
import inspect
import logging
import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

from bot.settings import Settings

Handler = Callable[[argparse.Namespace, Settings], Any]


def _command_modules() -> list[ModuleType]:
    # Imported lazily so `kb --help` stays fast and one broken group does not hide the others.
    import importlib

    names = ["ingest", "search", "docs", "ask", "eval", "compact", "demo", "serve", "classifier"]
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
    parser = argparse.ArgumentParser(prog="kb", description="Knowledge-base bot: ingest, search, ask, serve.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug details to stderr")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in _command_modules():
        module.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `kb` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    settings = Settings()
    result = handler(args, settings)
    if inspect.isawaitable(result):
        result = asyncio.run(result)  # type: ignore[arg-type]
    return int(result or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
