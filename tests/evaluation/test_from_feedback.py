"""`kb eval --from-feedback`: rated answers in a real SQLite store become a question file `kb eval` runs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from adapters.store.backends import open_store
from bot.evaluation.from_feedback import gold_passage
from bot.evaluation.questions import parse_lines
from bot.sample_kb import SAMPLE_KB_DIR
from tests.cli.cli_support import clean_env, kb, prepare_home

LEAVE, SICK, PARKING = "年假有几天?", "那病假呢?", "公司停车位每月租金是多少?"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample handbook; a conversation about annual leave with a follow-up on sick leave, and a question
    the handbook does not answer."""
    return prepare_home(
        tmp_path_factory.mktemp("feedback_home"),
        ("ingest", str(SAMPLE_KB_DIR), "--dataset", "sample"),
        ("ask", LEAVE, "--name", "leave"),
        ("ask", SICK, "--name", "leave"),
        ("ask", PARKING, "--name", "parking"),
    )


async def _rate(home: Path, ratings: dict[str, str]) -> None:
    """Give each question's record the verdict (through the store's own feedback write)."""
    async with await open_store(f"sqlite:///{home / 'conversations.sqlite3'}") as store:
        records = [r for r in await store.answered_since(0.0)]
        for record in records:
            if record.question in ratings:
                await store.add_feedback(record.id, person="U1", value=ratings[record.question], at=1.0)


def test_a_passage_never_ends_inside_a_number() -> None:
    """The gold passage is the paragraph's opening words, cut before a trailing numeral."""
    assert gold_passage("\n  第二十一条  劳动合同\n可以约定试用期。") == "第二十一条 劳动合同"
    prefix = "员工每年享有带薪年假，具体天数依照劳动法与公司规定，另见附则和说明" + "以及本"
    assert len(prefix) == 36
    assert gold_passage(prefix + "第一百二十三条的规定执行。") == prefix + "第"
    assert gold_passage("短句。") == "短句。"


async def test_rated_answers_become_a_question_set_that_kb_eval_runs(home: Path, tmp_path: Path) -> None:
    """👍 on the leave answer and its follow-up, 👎 on parking: the file holds three questions (the follow-up
    with its earlier turn, the 👍 ones with what their answers cited as gold, the 👎 one expecting a
    notice), and `kb eval` over it finds the 👍 gold again."""
    await _rate(home, {LEAVE: "up", SICK: "up", PARKING: "down"})
    env = clean_env(home)
    out = tmp_path / "feedback.jsonl"
    done = await asyncio.to_thread(kb, env, "eval", "--from-feedback", str(out), "--since", "7d")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"3 rated answer(s) written to {out}: 2 👍, 1 👎"
    parsed = parse_lines(out.read_text(encoding="utf-8").splitlines())
    assert parsed.bad_lines == []
    by_question = {q.question: q for q in parsed.questions}
    leave, sick, parking = by_question[LEAVE], by_question[SICK], by_question[PARKING]
    assert (leave.type, leave.turns, leave.expect_notice) == ("feedback_up", (), False)
    assert leave.gold and all(g.file.startswith("年假") for g in leave.gold)
    assert sick.turns == (LEAVE,) and sick.gold
    assert (parking.type, parking.gold, parking.expect_notice) == ("feedback_down", (), True)
    ran = await asyncio.to_thread(
        kb, env, "eval", str(out), "--dataset", "sample", "--json", str(tmp_path / "r.json")
    )
    assert ran.returncode == 0, ran.stderr
    results = {q["question"]: q for q in json.loads((tmp_path / "r.json").read_text())["questions"]}
    assert all(results[LEAVE]["final_found"]) and all(results[SICK]["final_found"])
    nothing = await asyncio.to_thread(kb, env, "eval", "--from-feedback", str(out), "--dataset", "other")
    assert nothing.stdout.startswith("0 rated answer(s)")
    bare = await asyncio.to_thread(kb, env, "eval")
    assert bare.returncode == 2 and "--from-feedback" in bare.stderr
