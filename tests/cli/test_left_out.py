"""A model's answer that leaves out a part of a compound question, through `kb ask` and `kb trace` against a
scripted OpenAI-compatible server: the part is quoted from its sources under the answer, stored on the
record and shown in the trace; an answer that covers every part gets nothing added."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.sample_kb import SAMPLE_KB_DIR
from tests.cli.cli_support import prepare_home, run_main, scripted_model
from tests.model_script import RecordedRequest, Reply
from tests.role_responder import RoleResponder, role_of

QUESTION = "年假有几天？报销的截止期限是多久？"
LEAVE = "工龄满 1 年不满 5 年的员工每年有 10 天年假[1]。"
DEADLINE = "报销单须在费用发生之日起 30 天内通过「星河报销」系统提交。"


class ScriptedAnswer(RoleResponder):
    """Answers every question with the given text."""

    answer = LEAVE

    def __call__(self, request: RecordedRequest) -> Reply | str:
        if role_of(request) == "answer":
            return self.answer
        return super().__call__(request)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A KB_HOME with the sample handbook as "sample"."""
    return prepare_home(
        tmp_path_factory.mktemp("left_out_home"), ("ingest", str(SAMPLE_KB_DIR), "--dataset", "sample")
    )


@pytest.fixture()
def responder() -> ScriptedAnswer:
    return ScriptedAnswer()


@pytest.fixture(autouse=True)
def _model(home: Path, responder: ScriptedAnswer, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with scripted_model(home, responder, monkeypatch):
        yield


def _ask(capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    code, out, err = run_main(capsys, "ask", QUESTION, "--dataset", "sample", "--json")
    assert code == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def test_a_part_the_answer_left_out_is_quoted_from_its_source_stored_and_traced(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The model answers the leave part only: the deadline part is quoted (30 天, with its marker) under a
    line naming it, the record keeps the quote, and `kb trace` lists it."""
    code, out, err = run_main(capsys, "ask", QUESTION, "--dataset", "sample")
    assert code == 0, err
    answer = out.split("来源:", 1)[0]
    assert "10 天年假" in answer
    assert "上面的回答没有涉及「报销的截止期限是多久」，资料中的相关内容：" in answer
    quoted = answer.split("资料中的相关内容：", 1)[1]
    assert re.search(r"^- 所有费用必须在费用发生之日起 30 天内.*。 \[\d\]$", quoted, re.MULTILINE), quoted
    record = _ask(capsys)
    details = record["details"]
    assert isinstance(details, dict)
    supplied = details["supplied"]
    assert supplied and all(item["part"] == "报销的截止期限是多久" for item in supplied)
    assert any("30 天内" in item["sentence"] for item in supplied)
    cited_documents = {citation["document"] for citation in details["citations"]}
    assert "费用报销" in cited_documents
    code, out, _ = run_main(capsys, "trace", str(record["id"]))
    assert code == 0 and "回答没有涉及「报销的截止期限是多久」，已摘录 [" in out


def test_an_answer_covering_every_part_gets_nothing_added(
    capsys: pytest.CaptureFixture[str], responder: ScriptedAnswer
) -> None:
    """The model answers both parts (its deadline sentence without a marker: attribution adds it): no quote
    is added and none is stored."""
    responder.answer = LEAVE + DEADLINE
    record = _ask(capsys)
    details = record["details"]
    assert isinstance(details, dict)
    assert details["supplied"] == []
    assert "没有涉及" not in str(record["answer"])
