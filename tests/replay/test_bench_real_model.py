"""bench_real_model.py: skipped cleanly without a server; its role and question bookkeeping."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bot.evaluation.questions import EvalQuestion
from core.answering import prompts
from tests.benchmarks.bench_real_model import first_of_each_type, role_of, scored_starts

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_real_model.py"


def _system(text: str) -> dict[str, object]:
    return {"messages": [{"role": "system", "content": text}, {"role": "user", "content": "q"}]}


def test_without_a_server_it_says_why_and_exits_0() -> None:
    """No URL configured, or nothing answering: one line and exit 0 (never a failure)."""
    quiet = subprocess.run([sys.executable, str(BENCH)], capture_output=True, text=True, timeout=60)
    assert quiet.returncode == 0 and "skipped: no model server configured" in quiet.stdout
    closed = subprocess.run(
        [sys.executable, str(BENCH), "--base-url", "http://127.0.0.1:9/v1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert closed.returncode == 0 and "skipped: no OpenAI-compatible server answers" in closed.stdout


def test_calls_are_named_by_their_system_prompt() -> None:
    """Each role's prompt (the answer's formatted, the assessor's with a JSON hint appended) is recognised."""
    answer = prompts.ANSWER_SYSTEM_EN.format(sufficient="true", stop_label="-")
    assert role_of(_system(answer)) == "answer"
    assert role_of(_system(prompts.ASSESS_SYSTEM + "\n\nReply with one JSON object")) == "assess"
    assert role_of(_system(prompts.REWRITE_SYSTEM)) == "rewrite"
    assert role_of(_system(prompts.VOTE_SYSTEM)) == "vote"
    assert role_of(_system(prompts.SUMMARY_SYSTEM_PROMPT_EN)) == "summary"
    assert role_of(_system("something else")) == "other"


def test_the_scored_ask_of_each_question_follows_its_setup_turns() -> None:
    """A follow-up's earlier turns are asked first; a question whose setup failed was never asked."""
    items = [
        EvalQuestion(id="a", type="single", question="A?"),
        EvalQuestion(id="b", type="followup", question="B2?", turns=("B1?",)),
        EvalQuestion(id="c", type="followup", question="C2?", turns=("C1?",)),
        EvalQuestion(id="d", type="single", question="D?"),
    ]
    asked = [("A?", 1.0), ("B1?", 2.0), ("B2?", 3.0), ("C1?", 4.0), ("D?", 5.0)]
    assert scored_starts(asked, items) == [1.0, 3.0, None, 5.0]
    assert [q.id for q in first_of_each_type(items, 1)] == ["a", "b"]
