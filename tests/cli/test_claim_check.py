"""A model's answer stating a figure no source holds, through `kb ask` and `kb trace` against a scripted
OpenAI-compatible server: marked under the answer, stored on the record, shown in the trace; the policy
setting drops the sentence instead."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.sample_kb import SAMPLE_KB_DIR
from tests.cli.cli_support import prepare_home, run_main, scripted_model
from tests.model_script import RecordedRequest, Reply
from tests.role_responder import RoleResponder, role_of

INVENTED = "报销须在费用发生之日起 45 天内提交[1]。"  # the handbook says 30 days
TRUE = "报销单通过「星河报销」系统提交[1]。"


class InventingResponder(RoleResponder):
    """Answers with one true sentence and one whose figure the handbook does not state."""

    def __call__(self, request: RecordedRequest) -> Reply | str:
        if role_of(request) == "answer":
            return TRUE + INVENTED
        return super().__call__(request)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A KB_HOME with the sample handbook as "sample"."""
    return prepare_home(
        tmp_path_factory.mktemp("claims_home"), ("ingest", str(SAMPLE_KB_DIR), "--dataset", "sample")
    )


@pytest.fixture(autouse=True)
def _model(home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with scripted_model(home, InventingResponder(), monkeypatch):
        yield


def test_an_invented_figure_is_marked_stored_and_traced(capsys: pytest.CaptureFixture[str]) -> None:
    """`kb ask` shows the answer with a line naming 45 天 as found in no source; the record keeps the claim
    and its sentence; `kb trace` lists it."""
    code, out, err = run_main(
        capsys, "ask", "报销的截止期限是多久?", "--dataset", "sample", "--mode", "single"
    )
    assert code == 0, err
    answer = out.split("来源:", 1)[0]
    assert TRUE in answer and "45 天内提交" in answer
    assert "⚠ 资料中找不到依据：「45 天」" in answer
    code, out, err = run_main(
        capsys, "ask", "报销的截止期限是多久?", "--dataset", "sample", "--mode", "single", "--json"
    )
    assert code == 0, err
    record = json.loads(out)
    [claim] = record["details"]["unsupported"]
    assert (claim["text"], claim["kind"]) == ("45 天", "number") and "45 天内提交" in claim["sentence"]
    code, out, _ = run_main(capsys, "trace", str(record["id"]))
    assert code == 0 and "资料中找不到数字 45 天" in out


def test_the_drop_sentence_policy_removes_the_sentence_and_says_so(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """KB_UNSUPPORTED_CLAIMS=drop_sentence: the stored answer keeps the true sentence only and says what went."""
    monkeypatch.setenv("KB_UNSUPPORTED_CLAIMS", "drop_sentence")
    code, out, err = run_main(
        capsys, "ask", "报销的截止期限是多久?", "--dataset", "sample", "--mode", "single", "--json"
    )
    assert code == 0, err
    record = json.loads(out)
    assert TRUE in record["answer"] and "45 天内提交" not in record["answer"]
    assert "⚠ 已删去资料中找不到依据的内容：「45 天」" in record["answer"]
