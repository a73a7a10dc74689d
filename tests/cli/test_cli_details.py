"""The smaller things a newcomer notices, through the `kb` entry point: KB_DATASETS for search, citation
numbers without gaps, a readable trace, search tables that keep version dates, a very long question."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest

from bot.sample_kb import SAMPLE_KB_DIR
from core.budget import count_tokens
from core.messages import CORE
from tests.cli.cli_support import prepare_home, run_main
from tests.model_script import RecordedRequest, Reply
from tests.model_server import ModelServer
from tests.role_responder import RoleResponder, role_of

LAW_NAME = "中华人民共和国劳动合同法实施条例(2008-09-18)"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A KB_HOME with the sample handbook as "sample" and one dated law as "laws"."""
    path = tmp_path_factory.mktemp("details_home")
    law = path / f"{LAW_NAME}.md"
    law.write_text(
        "# 劳动合同法实施条例\n\n## 第一章\n\n第一条 为了贯彻实施劳动合同法,制定本条例。\n", "utf-8"
    )
    return prepare_home(
        path,
        ("ingest", str(SAMPLE_KB_DIR), "--dataset", "sample"),
        ("ingest", str(law), "--dataset", "laws"),
    )


@pytest.fixture(autouse=True)
def _env(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KB_HOME", str(home))
    monkeypatch.setenv("LANG", "C.UTF-8")


def test_search_honours_kb_datasets(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without --dataset, kb search searches KB_DATASETS; with neither it says how to name one (exit 2)."""
    code, out, err = run_main(capsys, "search", "报销截止期限", "--json")
    assert code == 2 and err == ("error: 请用 --dataset 指定知识库(或设置 KB_DATASETS);现有:laws, sample\n")
    monkeypatch.setenv("KB_DATASETS", "sample")
    code, out, err = run_main(capsys, "search", "报销截止期限", "--json")
    assert code == 0, err
    found = json.loads(out)
    assert found["datasets"] == ["sample"] and found["hits"][0]["document"] == "费用报销"


def test_the_search_table_keeps_the_version_date_of_a_long_name(capsys: pytest.CaptureFixture[str]) -> None:
    """A long document name is shown whole (or cut in the middle), never losing its date."""
    code, out, _ = run_main(capsys, "search", "劳动合同法", "--dataset", "laws")
    assert code == 0
    assert "(2008-09-18)" in out.splitlines()[1]


class GapResponder(RoleResponder):
    """Answers with the first sentences of the first and third paragraphs, citing them ([1] and [3])."""

    def __call__(self, request: RecordedRequest) -> Reply | str:
        if role_of(request) == "answer":
            paragraphs = dict(_PARAGRAPH.findall(request.last_user_message))
            first, third = (paragraphs[n].strip().split("。")[0] for n in ("1", "3"))
            return f"{first}[1]。{third}[3]。"
        return super().__call__(request)


_PARAGRAPH = re.compile(r'<paragraph n="(\d+)"[^>]*>\n(.*?)</paragraph>', re.DOTALL)


def test_citation_numbers_have_no_gaps(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An answer citing evidence [1] and [3] is shown as [1] and [2], with sources numbered to match."""
    server = ModelServer(responder=GapResponder())
    with server.running_in_thread() as base_url:
        for name, value in (
            ("OPENAI_BASE_URL", base_url),
            ("OPENAI_API_KEY", "k"),
            ("KB_CHAT_MODEL", server.model),
        ):
            monkeypatch.setenv(name, value)
        code, out, err = run_main(
            capsys, "ask", "年假和报销有什么规定?", "--dataset", "sample", "--mode", "single"
        )
    assert code == 0, err
    answer, sources = out.split("来源:", 1)
    assert re.search(r"[^\[\]]+\[1\]。[^\[\]]+\[2\]。", answer) and "[3]" not in out
    assert re.findall(r"^\[(\d)\]", sources, re.MULTILINE) == ["1", "2"]


def test_the_trace_shows_context_as_words(capsys: pytest.CaptureFixture[str]) -> None:
    """kb trace's context line says turns and tokens in words; the raw JSON is only in --json."""
    assert run_main(capsys, "ask", "Java 有哪些基本数据类型?", "--name", "trace-me")[0] == 0
    code, out, _ = run_main(capsys, "ask", "那它们各自占用多少内存?", "--conversation", "trace-me", "--json")
    record = json.loads(out)
    code, out, _ = run_main(capsys, "trace", str(record["id"]))
    assert code == 0
    [line] = [line for line in out.splitlines() if line.startswith("上下文")]
    assert re.fullmatch(r"上下文: 近期 1 轮原文 · 摘要含 0 轮 · 约 \d+/6000 token", line), line
    assert "{" not in out


def _long_question() -> str:
    rng = random.Random(7)
    words = "the travel policy requires receipts for every expense and managers approve claims".split()
    text = " ".join(rng.choice(words) for _ in range(3800)) + " What is the deadline for expense claims?"
    assert 3700 <= count_tokens(text) <= 3999
    return text


def test_a_very_long_question_is_not_echoed_whole(capsys: pytest.CaptureFixture[str]) -> None:
    """A ~3,800-token English question is answered without echoing it whole on stderr or in the answer,
    and no search query carries the truncation marker."""
    question = _long_question()
    code, out, err = run_main(capsys, "ask", question, "--dataset", "sample", "--json")
    assert code == 0, err[-500:]
    assert max(len(line) for line in err.splitlines()) <= 200
    record = json.loads(out)
    assert record["question"] == question  # stored whole
    assert len(record["answer"]) < 1000
    queries = [q for step in record["details"]["trace"]["rounds"] for q in step["queries"]]
    assert queries and not any(
        marker in q for q in queries for marker in CORE.in_every_language("budget.truncated")
    )
