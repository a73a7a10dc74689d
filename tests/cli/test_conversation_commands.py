"""`kb ask`, `kb history`, `kb trace` and `kb chat` as subprocesses, offline and against the test model server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.sample_kb import SAMPLE_KB_DIR
from tests.cli.cli_support import run_main
from tests.model_server import ModelServer
from tests.role_responder import RoleResponder

ROOT = Path(__file__).resolve().parents[2]


def _kb(env: dict[str, str], *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        cwd=ROOT,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A KB_HOME with the sample handbook ingested as dataset "sample"."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("KB_", "OPENAI_", "SLACK_"))}
    base["KB_HOME"] = str(tmp_path_factory.mktemp("cli_home"))
    result = _kb(base, "ingest", str(SAMPLE_KB_DIR), "--dataset", "sample")
    assert result.returncode == 0, result.stderr
    return base


def test_ask_follow_up_history_and_trace_offline(env: dict[str, str]) -> None:
    """A question and a follow-up in one conversation, then its history and the follow-up's trace."""
    first = _kb(env, "ask", "Java 有哪些基本数据类型?", "--name", "cli1")
    assert first.returncode == 0, first.stderr
    assert "来源:" in first.stdout and "Java基本数据类型" in first.stdout
    assert "第 1 轮检索" in first.stderr  # progress goes to stderr
    second = _kb(env, "ask", "那它们各自占用多少内存?", "--conversation", "cli1", "--json")
    assert second.returncode == 0, second.stderr
    record = json.loads(second.stdout)
    assert record["status"] == "answered" and "Java" in record["rewritten"]
    assert record["details"]["citations"] and record["details"]["context"]["recent_rounds"] == 1
    history = _kb(env, "history", "cli1")
    assert history.stdout.count("[answered]") == 2 and "rewritten:" in history.stdout
    trace = _kb(env, "trace", str(record["id"]), "--json")
    assert json.loads(trace.stdout)["rewritten"] == record["rewritten"]
    text_trace = _kb(env, "trace", str(record["id"]))
    assert "改写后的问题" in text_trace.stdout and "停止原因" in text_trace.stdout
    again = _kb(env, "ask", "--again", str(record["id"]), "--json")
    assert again.returncode == 0, again.stderr
    redone = json.loads(again.stdout)
    assert redone["id"] == record["id"] and redone["status"] == "answered"
    assert redone["question"] == "那它们各自占用多少内存?" and "Java" in redone["rewritten"]
    assert [a["answer"] for a in redone["details"]["previous_answers"]] == [record["answer"]]


def test_english_follow_ups_are_rewritten_offline(env: dict[str, str]) -> None:
    """ "What about a P2 incident?" after a P1 question is searched and answered as the P1 question about P2
    (the possessive and pronoun cases are covered in tests/extractive/test_rewrite.py)."""
    first = _kb(env, "ask", "How fast must a P1 incident be acknowledged?", "--name", "en1")
    assert first.returncode == 0, first.stderr
    second = _kb(env, "ask", "What about a P2 incident?", "--conversation", "en1", "--json")
    assert second.returncode == 0, second.stderr
    record = json.loads(second.stdout)
    assert record["rewritten"] == "How fast must a P2 incident be acknowledged?"
    assert "within 4 hours" in record["answer"]


def test_again_needs_an_existing_record_of_that_conversation(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """--again with a record that is not there, with a question, or with another conversation exits 2
    (run in process: the same entry point as the subprocesses above)."""
    monkeypatch.setenv("KB_HOME", env["KB_HOME"])
    code, _, err = run_main(capsys, "ask", "--again", "999")
    assert (code, err.strip()) == (2, "error: Record 999 was not found.")
    first = json.loads(run_main(capsys, "ask", "年假有几天?", "--name", "again-a", "--json")[1])
    run_main(capsys, "ask", "病假呢?", "--name", "again-b")
    code, _, err = run_main(capsys, "ask", "--again", str(first["id"]), "--conversation", "again-b")
    assert code == 2 and f"记录 {first['id']} 不属于会话 cli::again-b:" in err
    code, _, err = run_main(capsys, "ask", "又一个问题", "--again", str(first["id"]))
    assert code == 2 and "--again" in err


def test_bad_questions_exit_with_a_clear_message(env: dict[str, str]) -> None:
    """Blank and overlong questions exit 2 with a user-facing message and store nothing answered."""
    blank = _kb(env, "ask", "   ")
    assert blank.returncode == 2 and "问题不能为空" in blank.stderr
    long = _kb(env, "ask", "字" * 5000)
    assert long.returncode == 2 and "5000" in long.stderr


def test_chat_session_with_a_model_server(env: dict[str, str]) -> None:
    """kb chat talks to the configured model: answers, /trace shows the last trace, /new and /quit work."""
    server = ModelServer(responder=RoleResponder(rewrites={"那它们": "Java 基本数据类型各自占用多少内存"}))
    with server.running_in_thread() as base_url:
        model_env = {**env, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "k", "KB_CHAT_MODEL": server.model}
        script = "Java 有哪些基本数据类型?\n那它们各自占用多少内存?\n/trace\n/new\n/quit\n"
        result = _kb(model_env, "chat", "--dataset", "sample", stdin=script)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("根据《Java基本数据类型》的资料作答[1]") == 2
    assert "改写后的问题: Java 基本数据类型各自占用多少内存" in result.stdout
    assert "new conversation" in result.stderr
    roles = [r for r in server.chat_requests]
    assert len(roles) >= 3  # answer, rewrite, answer (plus routing votes when the rules are unsure)
