"""`kb classifier`: the multi-hop classifier's train / eval / export / serve commands (multihop_classifier)."""

from __future__ import annotations

import argparse
from typing import Any

from bot.settings import Settings


def register(commands: Any) -> None:
    """Add `kb classifier COMMAND` with the classifier package's own sub-commands."""
    from multihop_classifier.cli import add_commands

    parser = commands.add_parser(
        "classifier",
        help="the multi-hop classifier service: generate, import, train, eval, export, predict, serve",
        description="Train, evaluate, export and serve the multi-hop classifier the router calls through "
        "KB_CLASSIFIER_URL (see multihop_classifier/README.md).",
    )
    add_commands(parser.add_subparsers(metavar="COMMAND"))
    parser.set_defaults(handler=lambda args, settings: classifier(args, settings, usage=parser.print_help))


def classifier(args: argparse.Namespace, settings: Settings, *, usage: Any) -> int:
    """Run the chosen classifier sub-command (the bot's settings are not used by it)."""
    from multihop_classifier.cli import run

    return run(args, usage=usage)
