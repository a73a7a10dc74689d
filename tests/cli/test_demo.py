"""`kb demo` end to end: a fresh KB_HOME, offline, the scripted conversation, exit 0."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_kb_demo_runs_the_scripted_conversation_offline(tmp_path: Path) -> None:
    """The demo ingests the sample KB, shows two rounds, a rewrite, compaction and the notice, and exits 0."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KB_", "OPENAI_", "SLACK_"))}
    env["KB_HOME"] = str(tmp_path / "home")
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "bot", "demo"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180
    )
    elapsed = time.monotonic() - started
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert "offline extractive engine" in result.stderr  # said once, clearly, at start
    assert out.count("━━ turn") >= 5
    turn1 = out.split("━━ turn 2")[0]
    assert "第 2 轮检索" in turn1 and "检索 2 轮" in turn1  # the compound question took two rounds
    assert "rewritten: Java 基本数据类型" in out  # the pronoun follow-up was rewritten
    assert "正在压缩" in out and "已压缩" in out  # compaction by the small demo budget
    turn5 = out.split("━━ turn 5")[1]
    assert "资料中未找到" in turn5  # the unverifiable part is said to be missing, and the notice names it
    assert "注意：缺少关于「公司 2026 年的团建预算是多少」的资料，以上结论仅供参考。" in turn5
    assert "来源:" in out and "摘录式回答" in out
    assert elapsed < 120, f"demo took {elapsed:.1f} s"
