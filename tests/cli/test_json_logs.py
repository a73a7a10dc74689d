"""KB_LOG_FORMAT=json: one JSON object per log line, naming the record and conversation, without content."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest

from bot.logs import JsonFormatter
from bot.sample_kb import SAMPLE_KB_DIR
from core.answering import log_context
from tests.cli.cli_support import clean_env, kb, prepare_home

QUESTION = "年假有几天?"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample handbook as "sample"."""
    return prepare_home(
        tmp_path_factory.mktemp("logs_home"), ("ingest", str(SAMPLE_KB_DIR), "--dataset", "sample")
    )


def _json_lines(stderr: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]


def test_a_question_logs_its_phases_as_json_with_its_ids_and_never_its_text(home: Path) -> None:
    """`kb ask` with KB_LOG_FORMAT=json: a line per phase (context … total) with the record id, the
    conversation id, the phase and its duration; no line holds the question."""
    done = kb(clean_env(home, KB_LOG_FORMAT="json"), "ask", QUESTION, "--name", "logged", "--json")
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    lines = _json_lines(done.stderr)
    phases = [line for line in lines if "phase" in line]
    assert [line["phase"] for line in phases][-1] == "total"
    assert {"context", "retrieval", "generation", "total"} <= {line["phase"] for line in phases}
    for line in phases:
        assert line["record_id"] == record["id"] and line["conversation_id"] == "cli::logged:"
        assert line["level"] == "info" and isinstance(line["duration"], float)
        assert line["event"] == "phase %s took %.3f s" and str(line["ts"]).endswith("+00:00")
    assert lines and all("年假" not in json.dumps(line, ensure_ascii=False) for line in lines)


def _record(message: str, *args: object, error: bool = False) -> logging.LogRecord:
    exc_info = None
    if error:
        try:
            raise ValueError("年假 is in the exception text")
        except ValueError:
            exc_info = sys.exc_info()
    return logging.LogRecord("core.pipeline", logging.WARNING, __file__, 1, message, args, exc_info)


def test_values_and_tracebacks_appear_only_with_kb_log_content() -> None:
    """A logged value (here a question) and a traceback stay out of the line unless content is allowed; the
    bound ids and the error's type are always there."""
    record = _record("rewrite of %s failed", QUESTION, error=True)
    with log_context.bound(record_id=7, conversation_id="cli::x:"):
        plain = json.loads(JsonFormatter().format(record))
        full = json.loads(JsonFormatter(content=True).format(record))
    assert plain["event"] == "rewrite of %s failed" and "年假" not in json.dumps(plain, ensure_ascii=False)
    assert (plain["record_id"], plain["conversation_id"], plain["error_type"]) == (7, "cli::x:", "ValueError")
    assert "traceback" not in plain and "message_args" not in plain
    assert full["event"] == f"rewrite of {QUESTION} failed" and full["message_args"] == [QUESTION]
    assert "年假 is in the exception text" in str(full["traceback"])
    outside = json.loads(JsonFormatter().format(_record("no question here")))
    assert "record_id" not in outside and "conversation_id" not in outside
