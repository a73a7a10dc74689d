"""Static checks run as part of the suite: ruff lint and format on everything, mypy (strict on core/)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


def test_ruff_finds_nothing() -> None:
    """ruff reports no lint errors in the project."""
    result = _run("ruff", "check", "core", "adapters", "bot", "multihop_classifier", "tests")
    assert result.returncode == 0, result.stdout + result.stderr


def test_code_is_ruff_formatted() -> None:
    """Every module is in ruff's format (so diffs show changes, not reflowing)."""
    result = _run("ruff", "format", "--check", "core", "adapters", "bot", "multihop_classifier", "tests")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_passes_strict_on_core() -> None:
    """mypy passes with --strict on core/ and with the project's settings elsewhere."""
    result = _run("mypy", "--no-error-summary")
    assert result.returncode == 0, result.stdout + result.stderr
