"""The command table `kb` starts from: every command is registered by the module it names, and only that
module is loaded for it."""

from __future__ import annotations

import argparse
import subprocess
import sys

from bot.cli import COMMANDS, _command_modules, build_parser, chosen_command
from tests.cli.cli_support import ROOT


def test_every_module_registers_exactly_the_commands_the_table_gives_it() -> None:
    """Registering each command module alone yields the commands COMMANDS maps to it, and the full parser
    has every one of them (a new command cannot be left out of the table unnoticed)."""
    registered: dict[str, str] = {}
    for module in _command_modules():
        commands = argparse.ArgumentParser().add_subparsers()
        module.register(commands)
        registered.update(dict.fromkeys(commands.choices, module.__name__.removeprefix("bot.cli.")))
    assert registered == COMMANDS
    full = build_parser()
    assert set(next(a for a in full._actions if isinstance(a, argparse._SubParsersAction)).choices) == set(
        COMMANDS
    )


def test_the_command_is_the_first_word_that_is_not_an_option() -> None:
    """`-v ask q` names ask; `--version`, `--help`, an unknown word or nothing name none (all are loaded)."""
    assert chosen_command(["-v", "ask", "question", "--json"]) == "ask"
    assert chosen_command(["import", "file.jsonl"]) == "import"
    assert [chosen_command(argv) for argv in (["--version"], ["--help"], ["asks"], [], ["--", "ask"])] == [
        None
    ] * 5


def test_a_command_loads_its_own_module_and_not_the_slack_or_model_packages() -> None:
    """`kb ask --help` in a fresh interpreter imports neither slack_bolt nor openai nor the other commands."""
    probe = (
        "import sys; from bot.cli import main\n"
        "try:\n    main(['ask', '--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('slack_bolt', 'openai', 'bot.cli.operations.serve', 'bot.cli.knowledge.sources')"
        " if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
