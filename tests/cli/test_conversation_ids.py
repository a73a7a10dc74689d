"""One conversation id everywhere, through the `kb` entry point: printed by ask/chat/demo, accepted by every
command, short forms, Slack thread ids, mistyped ids refused; the scope a conversation keeps; unknown
datasets. Each command runs as `main(argv)` in this process (as tests/kb/test_cli_kb.py does), a few as
subprocesses."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
from pathlib import Path

import pytest

from adapters.store.backends import open_store
from bot.sample_kb import SAMPLE_KB_DIR
from core.record import NO_DETAILS
from tests.cli.cli_support import clean_env, kb, prepare_home, run_main
from tests.stored import stored_question

SLACK_THREAD = "slack:T0KB:C0KB:1700000000.000100"
_PRINTED = re.compile(r"\(conversation (\S+) — continue with: kb ask --conversation (\S+) …\)")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A KB_HOME with datasets "sample" (the handbook) and "other" (one note)."""
    path = tmp_path_factory.mktemp("ids_home")
    note = path / "note.md"
    note.write_text("# 停车\n\n员工停车位在 B2 层,需提前一天预约。\n", encoding="utf-8")
    return prepare_home(
        path,
        ("ingest", str(SAMPLE_KB_DIR), "--dataset", "sample"),
        ("ingest", str(note), "--dataset", "other"),
    )


@pytest.fixture
def env(home: Path, monkeypatch: pytest.MonkeyPatch) -> Runner:
    """Commands run in this process against the module's KB_HOME, in an English locale."""
    monkeypatch.setenv("KB_HOME", str(home))
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.delenv("LC_ALL", raising=False)
    return Runner()


class Result:
    """What a command did: exit code, stdout, stderr (the fields of subprocess.CompletedProcess)."""

    def __init__(self, code: int, out: str, err: str) -> None:
        self.returncode, self.stdout, self.stderr = code, out, err


class Runner:
    """Runs `kb` commands in process; set .capsys before use (the env fixture's test provides it)."""

    capsys: pytest.CaptureFixture[str]

    def __call__(self, *argv: str, stdin: str = "") -> Result:
        return Result(*run_main(self.capsys, *argv, stdin=stdin))


@pytest.fixture(autouse=True)
def _capture(env: Runner, capsys: pytest.CaptureFixture[str]) -> None:
    env.capsys = capsys


def _ask(run: Runner, *args: str) -> tuple[dict[str, object], str]:
    result = run("ask", *args, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout), result.stderr


def _conversations(home: Path) -> list[str]:
    with sqlite3.connect(home / "conversations.sqlite3") as connection:
        return [row[0] for row in connection.execute("SELECT id FROM conversations ORDER BY id")]


def test_the_id_kb_ask_prints_is_accepted_by_every_command(env: Runner) -> None:
    """The id on stderr equals the --json conversation_id, and ask, history, context, compact and chat
    --conversation all accept it, as well as the name alone, a unique prefix and cli:NAME."""
    record, err = _ask(env, "Java 有哪些基本数据类型?", "--dataset", "sample")
    printed = _PRINTED.search(err)
    assert printed is not None and printed.group(1) == printed.group(2) == record["conversation_id"]
    conversation = str(record["conversation_id"])
    name = conversation.split(":")[2]
    follow, err = _ask(env, "那它们各自占用多少内存?", "--conversation", conversation)
    assert follow["conversation_id"] == conversation and "continue with" not in err
    for reference in (conversation, name, name[:6], f"cli:{name}"):
        history = env("history", reference)
        assert history.returncode == 0, (reference, history.stderr)
        assert history.stdout.startswith(f"conversation {conversation}\n")
        assert history.stdout.count("[answered]") == 2
    context = env("context", name[:6], "--json")
    assert json.loads(context.stdout)["conversation_id"] == conversation
    assert env("compact", conversation).returncode == 0
    chat = env("chat", "--conversation", conversation, stdin="/id\n/quit\n")
    assert chat.returncode == 0 and f"conversation {conversation} (resumed)" in chat.stderr
    assert conversation in chat.stdout


def test_a_mistyped_id_is_an_error_not_a_new_conversation(home: Path, env: Runner) -> None:
    """--conversation with an unknown id exits 2 and stores nothing; --name starts one on purpose."""
    before = _conversations(home)
    for command in (
        ("ask", "How many leave days?", "--conversation", "cli::7d17a67bb665:"),
        ("ask", "How many leave days?", "--conversation", "nosuchname"),
        ("history", "nosuchname"),
        ("context", "nosuchname"),
        ("compact", "nosuchname"),
        ("chat", "--conversation", "nosuchname"),
    ):
        result = env(*command)
        assert result.returncode == 2, command
        assert result.stderr.startswith("error: No conversation"), (command, result.stderr)
        assert "Traceback" not in result.stderr
    assert _conversations(home) == before
    chinese = env("ask", "年假有几天?", "--conversation", "nosuchname")
    assert chinese.stderr.startswith("error: 找不到会话「nosuchname」")  # in the question's language
    named, err = _ask(env, "年假有几天?", "--name", "my-topic", "--dataset", "sample")
    assert named["conversation_id"] == "cli::my-topic:" and "cli::my-topic:" in err
    assert env("history", "my-topic").returncode == 0


def test_an_ambiguous_short_form_lists_the_candidates(env: Runner) -> None:
    """A prefix two conversations share is refused (exit 2) with both ids named."""
    _ask(env, "年假有几天?", "--name", "twin-one", "--dataset", "sample")
    _ask(env, "年假有几天?", "--name", "twin-two", "--dataset", "sample")
    result = env("history", "twin")
    assert result.returncode == 2
    assert "matches several conversations" in result.stderr
    assert "cli::twin-one:" in result.stderr and "cli::twin-two:" in result.stderr


async def _slack_thread(home: Path) -> None:
    store = await open_store(f"sqlite:///{home}/conversations.sqlite3")
    try:
        record = await stored_question(store, SLACK_THREAD, "报销截止期限是多久?")
        await store.complete_record(record.id, answer="三十日内。", rewritten=None, details=NO_DETAILS)
    finally:
        await store.close()


def test_a_slack_threads_id_opens_in_history_and_context(home: Path, env: Runner) -> None:
    """`slack:T…:C…:ts` (and the ts alone) works for history, context and ask --conversation."""
    asyncio.run(_slack_thread(home))
    for reference in (SLACK_THREAD, "1700000000.000100"):
        history = env("history", reference)
        assert history.returncode == 0, history.stderr
        assert f"conversation {SLACK_THREAD}" in history.stdout and "报销截止期限是多久?" in history.stdout
        assert json.loads(env("context", reference, "--json").stdout)["conversation_id"] == SLACK_THREAD
    follow, _ = _ask(env, "出差呢?", "--conversation", SLACK_THREAD, "--dataset", "sample")
    assert follow["conversation_id"] == SLACK_THREAD


def test_a_conversation_keeps_the_datasets_and_modes_of_its_first_question(env: Runner) -> None:
    """A follow-up without --dataset searches the first question's datasets (and modes), as its trace
    records; a flag on one question wins for that question only."""
    first, _ = _ask(env, "员工停车位在哪里?", "--dataset", "other", "--search-mode", "keywords")
    conversation = str(first["conversation_id"])
    trace = first["details"]["trace"]  # type: ignore[index]
    assert (trace["datasets"], trace["search_mode"]) == (["other"], "keywords")
    follow, _ = _ask(env, "需要提前多久预约?", "--conversation", conversation)
    trace = follow["details"]["trace"]  # type: ignore[index]
    assert (trace["datasets"], trace["search_mode"]) == (["other"], "keywords")
    once, _ = _ask(env, "年假呢?", "--conversation", conversation, "--dataset", "sample")
    assert once["details"]["trace"]["datasets"] == ["sample"]  # type: ignore[index]
    later, _ = _ask(env, "停车收费吗?", "--conversation", conversation)
    assert later["details"]["trace"]["datasets"] == ["other"]  # type: ignore[index]
    shown = env("trace", str(later["id"])).stdout
    assert "知识库: other · 检索模式 keywords" in shown
    assert env("history", conversation).stdout.splitlines()[1] == "datasets: other"


def test_an_unknown_dataset_is_refused_before_anything_is_stored(home: Path, env: Runner) -> None:
    """ask, chat, search and docs refuse a dataset that does not exist with the same message (exit 2),
    and no conversation or record is stored."""
    before = _conversations(home)
    expected = "error: No such dataset: nosuch (available: other, sample)\n"
    for command in (
        ("ask", "What is the deadline?", "--dataset", "nosuch"),
        ("chat", "--dataset", "nosuch"),
        ("search", "What is the deadline?", "--dataset", "nosuch"),
        ("docs", "list", "--dataset", "nosuch"),
    ):
        result = env(*command, stdin="年假有几天?\n")
        assert (result.returncode, result.stderr.splitlines()[-1] + "\n") == (2, expected), command
    assert _conversations(home) == before


def test_chat_prints_its_ids_and_handles_slash_commands_itself(home: Path, env: Runner) -> None:
    """kb chat shows its conversation id at start and on /new; /help and unknown commands are answered
    by the chat, never sent to the knowledge base; //text asks "/text"."""
    script = "/help\n/nonsense\n/new\n/id\n//etc 是什么?\n/quit\n"
    result = env("chat", "--dataset", "sample", stdin=script)
    assert result.returncode == 0, result.stderr
    started = re.search(r"kb chat · conversation (\S+) \(new\) · datasets: sample", result.stderr)
    renewed = re.search(r"\(new conversation (\S+)\)", result.stderr)
    assert started is not None and renewed is not None and started.group(1) != renewed.group(1)
    assert "/trace" in result.stdout and "unknown command /nonsense" in result.stderr
    assert renewed.group(1) in result.stdout  # /id
    assert started.group(1) not in _conversations(home)  # /help and /nonsense asked nothing
    history = env("history", renewed.group(1)).stdout
    assert "Q: /etc 是什么?" in history and history.count("Q:") == 1


def test_kb_demo_prints_an_id_the_other_commands_open(home: Path, env: Runner) -> None:
    """The demo ends with its conversation id; history and chat --conversation open it there (all three
    as subprocesses, the way a newcomer runs them)."""
    demo = kb(clean_env(home), "demo")
    assert demo.returncode == 0, demo.stderr
    found = re.search(r"^conversation (demo::\S+:) · summary revision", demo.stdout, re.MULTILINE)
    assert found is not None
    conversation = found.group(1)
    assert f"kb chat --conversation {conversation}" in demo.stdout
    demo_env = clean_env(home / "demo")
    history = kb(demo_env, "history", conversation)
    assert history.returncode == 0 and history.stdout.count("[answered]") == 5
    chat = kb(demo_env, "chat", "--conversation", conversation, stdin="/quit\n")
    assert f"conversation {conversation} (resumed) · datasets: sample" in chat.stderr
