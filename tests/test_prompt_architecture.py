"""Prompts are built only by core.prompt_markup: no other module constructs or rewrites a model Message,
and no adapter builds chat messages of its own or prompt parts from untrusted text."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("core", "adapters", "bot")
BUILDER = "core/prompt_markup.py"
# The OpenAI wire form of the Messages the builder made (plus the schema hint, program text).
WIRE = "adapters/models/chat_request.py"
BUILDER_NAMES = {"Markup", "compose", "element", "json_data", "message", "prompt", "turn_messages"}


def _callee(node: ast.Call) -> str:
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _message_names(tree: ast.Module) -> set[str]:
    """The names core.models.Message goes by in a module (an import may rename it)."""
    names = {"Message"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "core.models":
            names.update(alias.asname for alias in node.names if alias.name == "Message" and alias.asname)
    return names


def prompt_rule_breaks(root: Path, packages: tuple[str, ...] = PACKAGES) -> list[str]:
    """Every place outside the builder that constructs a Message, replaces a message's role or content,
    writes a chat message dict ({"role": ...}) other than the wire form, or, outside core, uses the
    builder to make prompt parts; as "path:line what", in file and line order."""
    breaks: list[tuple[str, int, str]] = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            where = path.relative_to(root).as_posix()
            if where == BUILDER:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            messages = _message_names(tree)
            for node in ast.walk(tree):
                line = getattr(node, "lineno", 0)
                if isinstance(node, ast.Call):
                    callee = _callee(node)
                    if callee in messages:
                        breaks.append((where, line, "constructs a Message"))
                    elif callee == "replace" and {k.arg for k in node.keywords} & {"role", "content"}:
                        breaks.append((where, line, "replaces a message's role or content"))
                elif isinstance(node, ast.Dict) and where != WIRE:
                    if any(isinstance(key, ast.Constant) and key.value == "role" for key in node.keys):
                        breaks.append((where, line, "writes a chat message dict"))
                elif isinstance(node, ast.ImportFrom) and node.module == "core.prompt_markup":
                    used = {alias.name for alias in node.names} & BUILDER_NAMES
                    if used and package != "core":
                        breaks.append(
                            (where, line, f"builds prompt parts outside core ({', '.join(sorted(used))})")
                        )
    return [f"{where}:{line} {what}" for where, line, what in sorted(breaks)]


def test_every_prompt_is_built_by_the_prompt_builder() -> None:
    """No module of core, adapters or bot makes a model message any other way than core.prompt_markup."""
    assert prompt_rule_breaks(ROOT) == []


def test_the_prompt_rule_catches_a_prompt_built_another_way(tmp_path: Path) -> None:
    """A role prompt built with Message(...) (also renamed), a rewritten content, an adapter's own message
    dict and an adapter using the builder are each flagged; the builder itself and the wire form are not."""
    files = {
        "core/prompt_markup.py": 'from core.models import Message\nMessage("user", "built here")\n',
        "core/answering/role.py": (
            "import dataclasses\n"
            "from core.models import Message\n"
            "from core.models import Message as Turn\n"
            "def rules(document):\n"
            '    return [Message("system", "rules"), Turn("user", document)]\n'
            "def swap(message, document):\n"
            "    return dataclasses.replace(message, content=document)\n"
        ),
        "adapters/models/chat_request.py": 'def wire(m):\n    return {"role": m.role, "content": m.content}\n',
        "adapters/models/other.py": (
            "from core.prompt_markup import Markup, unescape_text\n"
            'def forged(text):\n    return [{"role": "user", "content": text}, Markup(text)]\n'
        ),
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert prompt_rule_breaks(tmp_path, ("core", "adapters")) == [
        "adapters/models/other.py:1 builds prompt parts outside core (Markup)",
        "adapters/models/other.py:3 writes a chat message dict",
        "core/answering/role.py:5 constructs a Message",
        "core/answering/role.py:5 constructs a Message",
        "core/answering/role.py:7 replaces a message's role or content",
    ]
