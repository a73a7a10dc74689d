"""A small knowledge base ingested once per session: the sample handbook plus the 2023 reconsideration law."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from bot.cli import main as kb_main
from bot.sample_kb import SAMPLE_KB_DIR

SHARED = Path(__file__).resolve().parents[3] / "shared"
LAW = SHARED / "data" / "zh_laws" / "诉讼与非诉讼程序法" / "行政复议法(2023-09-01).md"


@pytest.fixture(scope="session")
def scenario_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A KB_HOME holding the dataset "kb" (sample handbook + 行政复议法 2023), built once."""
    if not LAW.exists():
        pytest.skip(f"evaluation data not found at {LAW}")
    home = tmp_path_factory.mktemp("scenario_home")
    docs = tmp_path_factory.mktemp("scenario_docs")
    for path in SAMPLE_KB_DIR.glob("*.md"):
        shutil.copy(path, docs / path.name)
    shutil.copy(LAW, docs / LAW.name)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KB_HOME", str(home))
        assert kb_main(["ingest", str(docs), "--dataset", "kb"]) == 0
    return home


@pytest.fixture
def kb_home(scenario_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """KB_HOME for one test: a copy of the session knowledge base with a fresh conversation store."""
    home = tmp_path / "home"
    shutil.copytree(scenario_home, home)
    for db in home.glob("conversations.sqlite3*"):
        db.unlink()
    monkeypatch.setenv("KB_HOME", str(home))
    monkeypatch.setenv("KB_DATASETS", "kb")
    return home


def run_sync(coro: object) -> object:
    """Run a coroutine from sync code (helper for CLI-style tests)."""
    return asyncio.run(coro)  # type: ignore[arg-type]
