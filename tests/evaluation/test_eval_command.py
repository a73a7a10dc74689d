"""`kb eval` as a subprocess over the bundled sample handbook, offline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.sample_kb import SAMPLE_KB_DIR

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = [
    {
        "id": "leave",
        "type": "single",
        "question": "年假有几天？",
        "gold": [{"must_contain": "每年 10 天年假"}],
        "answer_keywords": ["10 天"],
    },
    {
        "id": "memory",
        "type": "followup",
        "turns": ["Java 有哪些基本数据类型？"],
        "question": "那它们各自占用多少内存？",
        "gold": [{"must_contain": "int 占用 4 个字节"}],
    },
    {"id": "party", "type": "absent", "question": "公司 2031 年团建的预算是多少？"},
    {"id": "hedged", "type": "single", "question": "公司 2031 年的年会在哪里办？", "expect_notice": False},
]


def _kb(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A KB_HOME with the sample handbook ingested as dataset "sample"."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("KB_", "OPENAI_", "SLACK_"))}
    base["KB_HOME"] = str(tmp_path_factory.mktemp("eval_home"))
    result = _kb(base, "ingest", str(SAMPLE_KB_DIR), "--dataset", "sample")
    assert result.returncode == 0, result.stderr
    return base


def test_eval_prints_the_table_and_writes_json_and_html(env: dict[str, str], tmp_path: Path) -> None:
    """Every question runs through the pipeline; a bad line is reported by number; JSON and HTML are written."""
    questions = tmp_path / "q.jsonl"
    lines = [json.dumps(q, ensure_ascii=False) for q in QUESTIONS]
    questions.write_text("\n".join([lines[0], "{broken", *lines[1:]]) + "\n", encoding="utf-8")
    result = _kb(
        env,
        "eval",
        str(questions),
        "--dataset",
        "sample",
        "--json",
        str(tmp_path / "r.json"),
        "--html",
        str(tmp_path / "r.html"),
    )
    assert result.returncode == 0, result.stderr
    assert f"{questions}:2: skipped: not JSON" in result.stderr
    table = result.stdout
    assert "single" in table and "followup" in table and "absent" in table
    assert "gold by one search @10" in table and "gold cited in the answer" in table
    listing = table.split("judged missing where no notice was expected (1 of 4):\n", 1)[1]
    assert listing.startswith("  single     hedged: ") and "年会" in listing and "party" not in listing
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    by_id = {item["id"]: item for item in report["questions"]}
    assert by_id["leave"]["final_found"] == [True] and by_id["leave"]["keywords_found"] == [True]
    assert "Java" in by_id["memory"]["rewritten"] and by_id["memory"]["final_found"] == [True]
    assert by_id["party"]["gold"] == [] and by_id["party"]["expect_notice"] is True
    assert by_id["leave"]["calls"]["answer"] == 1
    assert (
        by_id["hedged"]["notice"] and "年会" in by_id["hedged"]["missing"] and by_id["leave"]["missing"] == ""
    )
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and "<svg" in page and "年假有几天" in page


def test_eval_refuses_an_unknown_dataset_and_a_missing_file(env: dict[str, str], tmp_path: Path) -> None:
    """Exit 2 with the list of existing datasets, or with the unreadable path; no traceback."""
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps(QUESTIONS[0], ensure_ascii=False) + "\n", encoding="utf-8")
    unknown = _kb(env, "eval", str(questions), "--dataset", "nosuch")
    assert unknown.returncode == 2 and "unknown dataset nosuch; existing: sample" in unknown.stderr
    missing = _kb(env, "eval", str(tmp_path / "none.jsonl"), "--dataset", "sample")
    assert missing.returncode == 2 and "cannot read" in missing.stderr and "Traceback" not in missing.stderr
