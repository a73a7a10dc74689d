"""Shared fixtures: an isolated KB_HOME and environment per test, and a Chroma server on demand."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.chroma_server import chroma_server

pytest_plugins = ["tests.model_fixtures"]

_ENV_PREFIXES = ("KB_", "OPENAI_", "SLACK_")


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test starts with no KB_/OPENAI_/SLACK_ variables and its own KB_HOME."""
    for name in list(os.environ):
        if name.startswith(_ENV_PREFIXES):
            monkeypatch.delenv(name, raising=False)
    home = tmp_path / "kb_home"
    home.mkdir()
    monkeypatch.setenv("KB_HOME", str(home))
    yield home


@pytest.fixture
def chroma_url(tmp_path: Path) -> Iterator[str]:
    """A `chroma run` server on a free port over a temporary folder, stopped after the test."""
    with chroma_server(tmp_path) as url:
        yield url
