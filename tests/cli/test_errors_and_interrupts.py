"""One error path for the whole CLI, as subprocesses: `error:` lines and exit codes, Ctrl-C, Ctrl-D, broken
pipes, bad database URLs, --version and --help; never a traceback without -v."""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bot.cli import build_parser, package_version
from bot.sample_kb import SAMPLE_KB_DIR
from tests.cli.cli_support import ROOT, PtySession, clean_env, kb, kb_popen, prepare_home, wait_for_line
from tests.model_server import ModelServer, Reply
from tests.role_responder import RoleResponder

EXTRACTIVE_LINE = "answering with the offline extractive engine"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A KB_HOME with the sample handbook ingested as dataset "sample" and one answered question."""
    long_question = "Java 虚拟机如何回收内存?" * 250  # ~11 KB: the history below outgrows a pipe's 64 KB
    return prepare_home(
        tmp_path_factory.mktemp("errors_home"),
        ("ingest", str(SAMPLE_KB_DIR), "--dataset", "sample"),
        ("ask", "Java 有哪些基本数据类型?", "--name", "first"),
        *[("ask", long_question, "--name", "long") for _ in range(12)],
    )


def test_version_and_help_name_the_environment() -> None:
    """`kb --version` prints the package version; `kb --help` lists KB_HOME and the main variables."""
    version = kb(clean_env(ROOT / "unused"), "--version")
    assert version.returncode == 0 and version.stdout.strip() == f"kb {package_version()}"
    shown = kb(clean_env(ROOT / "unused"), "--help").stdout
    for name in ("KB_HOME", "KB_DATABASE_URL", "KB_CHROMA_URL", "KB_DATASETS", "OPENAI_BASE_URL"):
        assert name in shown, name
    assert "KB_CHAT_MODEL" in shown and "exit status" in shown


def _actions(parser: argparse.ArgumentParser, path: str) -> list[tuple[str, argparse.Action]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _actions(sub, f"{path} {name}")
        elif not isinstance(action, argparse._HelpAction):
            found.append((path, action))
    return found


def test_every_argument_of_every_command_has_help_text() -> None:
    """No positional argument or option of any `kb` command is left without a help string."""
    missing = [f"{path}: {action.dest}" for path, action in _actions(build_parser(), "kb") if not action.help]
    assert missing == []


def test_a_domain_error_is_one_line_in_the_users_language(home: Path) -> None:
    """An unknown record is bad input: exit 2, one `error:` line, English by default, Chinese for zh."""
    english = kb(clean_env(home), "trace", "999")
    assert (english.returncode, english.stderr) == (2, "error: Record 999 was not found.\n")
    chinese = kb(clean_env(home, LANG="zh_CN.UTF-8"), "trace", "999")
    assert (chinese.returncode, chinese.stderr) == (2, "error: 找不到记录 999。\n")


def test_bad_or_unreachable_database_urls_are_one_line(home: Path) -> None:
    """An unreachable PostgreSQL exits 1, an unknown scheme exits 2; each is one line, no password."""
    unreachable = kb(clean_env(home, KB_DATABASE_URL="postgresql://kb:s3cret@127.0.0.1:1/kb"), "history", "x")
    assert unreachable.returncode == 1
    assert unreachable.stderr.count("\n") == 1 and unreachable.stderr.startswith("error: ")
    assert "KB_DATABASE_URL: cannot connect to PostgreSQL at 127.0.0.1:1/kb" in unreachable.stderr
    assert "s3cret" not in unreachable.stderr
    scheme = kb(clean_env(home, KB_DATABASE_URL="mysql://localhost/kb"), "history", "x")
    assert scheme.returncode == 2 and scheme.stderr.count("\n") == 1
    assert "Unsupported database URL scheme 'mysql'" in scheme.stderr


def test_verbose_shows_the_traceback(home: Path) -> None:
    """With -v the same error also shows where it came from."""
    result = kb(clean_env(home, KB_DATABASE_URL="mysql://localhost/kb"), "-v", "history", "x")
    assert result.returncode == 2 and "Traceback" in result.stderr


def test_a_closed_pipe_ends_quietly(home: Path) -> None:
    """`kb history … | head` closing the pipe early (the output is larger than the pipe holds, so the
    write after the close really fails): exit 0 and nothing on stderr."""
    env = clean_env(home)
    process = subprocess.Popen(
        [sys.executable, "-m", "bot", "history", "long"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.read(10)
    process.stdout.close()
    assert process.wait(timeout=60) == 0
    assert process.stderr.read() == b""


def test_commands_that_answer_nothing_do_not_announce_the_engine(home: Path) -> None:
    """history, trace, context and compact print no "answering with the extractive engine" line."""
    env = clean_env(home)
    for args in (("history", "first"), ("trace", "1"), ("context", "first"), ("compact", "first")):
        result = kb(env, *args)
        assert result.returncode == 0, (args, result.stderr)
        assert EXTRACTIVE_LINE not in result.stderr, args


def test_an_endpoint_without_a_model_name_says_the_model_is_missing(home: Path) -> None:
    """With OPENAI_BASE_URL and a key but no KB_CHAT_MODEL the notice names KB_CHAT_MODEL."""
    env = clean_env(home, OPENAI_BASE_URL="http://127.0.0.1:9/v1", OPENAI_API_KEY="k")
    result = kb(env, "ask", "年假有几天?", "--dataset", "sample")
    assert result.returncode == 0, result.stderr
    assert "OPENAI_BASE_URL is set but no model is named (set KB_CHAT_MODEL)" in result.stderr
    assert "no model endpoint is configured" not in result.stderr


def test_ctrl_c_during_ask_marks_the_record_and_prints_one_line(home: Path) -> None:
    """SIGINT while the model writes: one line naming the record and how to retry, exit 130, the record
    marked interrupted; `kb ask --again N` then answers it."""
    server = ModelServer(responder=RoleResponder(), delay=30.0)
    with server.running_in_thread() as base_url:
        env = clean_env(home, OPENAI_BASE_URL=base_url, OPENAI_API_KEY="k", KB_CHAT_MODEL=server.model)
        process = kb_popen(env, "ask", "新员工入职第一天要做什么?", "--mode", "single", "--name", "ctrl-c")
        assert process.stderr is not None
        wait_for_line(process.stderr, "正在根据检索资料生成回答")
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    assert process.returncode == 130, err
    assert "Traceback" not in err and out == ""
    history = kb(clean_env(home), "history", "ctrl-c").stdout
    record = int(history.split("#", 1)[1].split(" ", 1)[0])
    assert "[interrupted]" in history
    assert (
        err.strip().splitlines()[-1]
        == f"已中断;记录 {record} 已标记为中断 — 用 `kb ask --again {record}` 重试"
    )
    again = kb(clean_env(home), "ask", "--again", str(record), "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["status"] == "answered"
    assert "正在读取会话上下文" in again.stderr  # a Chinese question gets Chinese progress, also --again


def test_chat_exits_on_ctrl_c_at_the_prompt(home: Path) -> None:
    """Ctrl-C at the `kb chat` prompt ends the session at once: exit 130, no traceback."""
    session = PtySession(clean_env(home), "chat", "--dataset", "sample")
    session.read_until("> ")
    session.type("\x03", after=0.5)
    assert session.wait() == 130
    assert "Traceback" not in session.screen


def test_chat_exits_on_ctrl_d_with_a_newline(home: Path) -> None:
    """Ctrl-D at the prompt ends the session with exit 0 and leaves the cursor on a new line."""
    session = PtySession(clean_env(home), "chat", "--dataset", "sample")
    session.read_until("> ")
    session.type("\x04", after=0.5)
    assert session.wait() == 0
    assert session.screen.endswith("> \r\n") and "Traceback" not in session.screen


def test_ctrl_c_while_chat_answers_interrupts_that_answer_only(home: Path) -> None:
    """Ctrl-C during an answer in `kb chat` marks that record interrupted, says so in one line and returns
    to the prompt; the session goes on until /quit."""
    server = ModelServer(responder=RoleResponder(), delay=30.0)
    with server.running_in_thread() as base_url:
        env = clean_env(home, OPENAI_BASE_URL=base_url, OPENAI_API_KEY="k", KB_CHAT_MODEL=server.model)
        session = PtySession(env, "chat", "--dataset", "sample", "--mode", "single", "--name", "chat-ctrl-c")
        session.read_until("> ")
        session.type("报销的截止期限是多久?\r", after=0.5)
        session.read_until("正在根据检索资料生成回答")
        session.type("\x03", after=0.3)
        screen = session.read_until("重试")
        session.read_until("> ", timeout=30)
        session.type("/quit\r", after=0.5)
        assert session.wait() == 0
    assert "Traceback" not in session.screen
    line = next(text for text in screen.splitlines() if "已中断" in text).strip()
    record = int(line.split("记录 ", 1)[1].split(" ", 1)[0])
    assert line == f"已中断;记录 {record} 已标记为中断 — 用 `kb ask --again {record}` 重试"
    assert f"#{record} [interrupted]" in kb(clean_env(home), "history", "chat-ctrl-c").stdout


@pytest.mark.parametrize("after", [0.3, 1.0, 2.0])
def test_ctrl_c_at_any_moment_of_ask_is_one_line(home: Path, after: float) -> None:
    """SIGINT while the program is still importing, opening its stores or answering: exit 130, no
    traceback, the `interrupted` line last."""
    server = ModelServer(responder=RoleResponder(), delay=30.0)  # the answer never comes in time
    with server.running_in_thread() as base_url:
        env = clean_env(home, OPENAI_BASE_URL=base_url, OPENAI_API_KEY="k", KB_CHAT_MODEL=server.model)
        process = kb_popen(env, "ask", "Java 有哪些基本数据类型?", "--dataset", "sample", "--mode", "single")
        time.sleep(after)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert err.strip().splitlines()[-1].startswith(("interrupted", "已中断"))


def test_a_kb_home_that_is_a_file_or_cannot_be_made_is_one_line_naming_it(tmp_path: Path) -> None:
    """KB_HOME pointing at a file, or below one: exit 2, one `error:` line naming the path and why."""
    a_file = tmp_path / "passwd"
    a_file.write_text("root:x:0:0\n", encoding="utf-8")
    for home, cause in (
        (a_file, "is a file, not a folder"),
        (a_file / "kb", "a part of that path is a file"),
    ):
        result = kb(clean_env(home), "datasets", "list")
        assert result.returncode == 2, result.stderr
        assert result.stderr.startswith(f"error: KB_HOME {home} ") and cause in result.stderr
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    chinese = kb(clean_env(a_file, LANG="zh_CN.UTF-8"), "search", "x", "--dataset", "t")
    assert chinese.returncode == 2 and f"KB_HOME {a_file} 是一个文件" in chinese.stderr


def test_a_sqlite_url_whose_folder_does_not_exist_creates_nothing(tmp_path: Path) -> None:
    """A typo'd KB_DATABASE_URL (sqlite:/// + a relative path that does not exist) is one line naming the
    folder; no new empty store appears anywhere."""
    home = tmp_path / "home"
    work = tmp_path / "work"
    work.mkdir()
    env = clean_env(home, KB_DATABASE_URL="sqlite:///tmp/kb/conversations.sqlite3")
    result = subprocess.run(
        [sys.executable, "-m", "bot", "history", "x"],
        cwd=work,
        env={**env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1
    assert f"its folder {work / 'tmp' / 'kb'} does not exist" in result.stderr
    assert list(work.iterdir()) == []


def test_a_refused_model_request_is_a_setting_to_fix_not_try_again_later(tmp_path: Path) -> None:
    """An embeddings endpoint answering 401 (a wrong key): `kb ingest` exits 2 with one line naming the
    status and the settings, never "try again later"."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\nSome text.\n", encoding="utf-8")
    server = ModelServer(responder=RoleResponder())
    server.enqueue(
        *[Reply(status=401, error="invalid api key", error_type="invalid_request_error") for _ in range(3)],
        endpoint="embeddings",
    )
    with server.running_in_thread() as base_url:
        env = clean_env(
            tmp_path / "home", OPENAI_BASE_URL=base_url, OPENAI_API_KEY="k", KB_EMBEDDING_MODEL="emb"
        )
        result = kb(env, "ingest", str(folder), "--dataset", "t")
    assert result.returncode == 2, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error: The model service refused the request (HTTP 401)"), result.stderr
    assert "try again" not in result.stderr and "Traceback" not in result.stderr


def test_an_ingest_whose_output_pipe_closes_still_finishes(tmp_path: Path) -> None:
    """`kb ingest … | head -c 20`: the reader goes away at once, yet the ingest finishes, exits 0 and
    every file is searchable afterwards."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for n in range(40):
        (folder / f"note{n}.md").write_text(
            f"# Note {n}\n\nParking space {n} is in lot B.\n", encoding="utf-8"
        )
    for n in range(5):  # blank files: their warnings are written mid-ingest, after the reader left
        (folder / f"note{n}-blank.md").write_text("", encoding="utf-8")
    env = clean_env(tmp_path / "home")
    process = subprocess.Popen(
        [sys.executable, "-m", "bot", "ingest", str(folder), "--dataset", "t"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    assert process.stdout is not None
    process.stdout.read(20)
    process.stdout.close()
    assert process.wait(timeout=120) == 0
    listing = kb(env, "docs", "list", "--dataset", "t")
    assert listing.returncode == 0 and "40 documents" in listing.stdout


def test_a_store_thread_finishing_after_ctrl_c_prints_no_traceback(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C while a worker thread (as aiosqlite's) still runs a query: the thread later fails to hand
    its result to the closed event loop; the user sees only the interrupted line."""
    import asyncio
    import threading

    from bot.cli.outcome import run_command

    monkeypatch.setattr(threading, "excepthook", threading.excepthook)
    release = threading.Event()
    worker: list[threading.Thread] = []

    async def handler(_: argparse.Namespace, __: object) -> int:
        loop = asyncio.get_running_loop()

        def late() -> None:
            release.wait(10)
            loop.call_soon_threadsafe(lambda: None)  # the loop is closed by now

        worker.append(threading.Thread(target=late))
        worker[0].start()
        raise KeyboardInterrupt

    assert run_command(handler, argparse.Namespace(), None) == 130
    release.set()
    worker[0].join(10)
    err = capsys.readouterr().err
    assert "Traceback" not in err and "Event loop is closed" not in err
    assert err.strip().splitlines()[-1].startswith(("interrupted", "已中断"))
