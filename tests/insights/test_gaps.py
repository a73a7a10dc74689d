"""The knowledge base's gaps: which records are gaps, how they group by topic, and `kb gaps` as a subprocess."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from bot.sample_kb import SAMPLE_KB_DIR
from core.insights.finder import RecentGaps, find_gaps
from core.insights.gaps import gap_reasons, group_by_topic, summarise_gaps
from core.models import RecordStatus
from core.record import CitedSource, Record, RecordDetails, UnsupportedClaim, Verdict
from core.trace import RetrievalTrace
from tests.cli.cli_support import clean_env, kb, prepare_home
from tests.fakes import InMemoryConversationStore

ABSENT = ("员工持股计划的股票期权怎么行权?", "股票期权的行权价格是多少?", "公司停车位每月租金是多少?")


def _record(number: int, question: str, **details: object) -> Record:
    return Record(
        id=number,
        conversation_id="c",
        question=question,
        status=RecordStatus.ANSWERED,
        answer="…",
        created_at=float(number),
        details=RecordDetails(**details),  # type: ignore[arg-type]
    )


def test_a_notice_an_unsupported_claim_or_a_thumbs_down_makes_a_gap() -> None:
    """Each reason alone makes a record a gap; a plain answered record, or a thumbs-up, does not."""
    assert gap_reasons(_record(1, "q", notice="注意：缺少关于「婚假」的资料")) == ("notice",)
    assert gap_reasons(_record(2, "q", unsupported=(UnsupportedClaim("六十日", "number"),))) == (
        "unsupported",
    )
    assert gap_reasons(_record(3, "q", feedback=(Verdict("U1", "down"),))) == ("thumbs_down",)
    assert gap_reasons(_record(4, "q", feedback=(Verdict("U1", "up"),))) == ()
    assert gap_reasons(_record(5, "q")) == ()


def test_questions_group_by_meaning_and_the_most_asked_topic_comes_first() -> None:
    """Close vectors share a group (counted, newest example first, the missing parts and cited documents
    tallied); a distant one is a topic of its own."""
    vectors = [[1.0, 0.0], [0.0, 1.0], [0.96, 0.28], [0.8, 0.6]]
    groups = group_by_topic(vectors, threshold=0.7)
    assert groups == [[0, 2, 3], [1]]
    trace = RetrievalTrace(missing="缺少关于「行权价格」的资料")
    cited = (CitedSource(1, "员工手册"),)
    records = [
        _record(1, "期权怎么行权", notice="n", trace=trace, citations=cited),
        _record(2, "停车费多少", notice="n"),
        _record(3, "行权价格", notice="n", trace=trace, citations=cited),
        _record(4, "期权何时归属", feedback=(Verdict("U1", "down"),)),
    ]
    first, second = summarise_gaps(records, groups)
    assert (first.count, first.examples[0], first.record_ids) == (3, "期权何时归属", (4, 3, 1))
    assert first.missing == ("缺少关于「行权价格」的资料",) and first.documents == ("员工手册",)
    assert first.reasons == {"notice": 2, "thumbs_down": 1}
    assert (second.count, second.examples) == (1, ("停车费多少",))


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample handbook, asked about stock options twice and parking once (none of it in the handbook)
    and about annual leave once (answered from it)."""
    asks = [("ask", question, "--name", f"gap{number}") for number, question in enumerate(ABSENT)]
    return prepare_home(
        tmp_path_factory.mktemp("gaps_home"),
        ("ingest", str(SAMPLE_KB_DIR), "--dataset", "sample"),
        *asks,
        ("ask", "年假有几天?", "--name", "leave"),
    )


async def test_kb_gaps_groups_the_unanswered_topics(home: Path, tmp_path: Path) -> None:
    """`kb gaps --json`: the two stock-option questions are one topic, parking another, annual leave none;
    `--html` writes the same topics as a self-contained page; `--dataset` of another dataset leaves
    nothing, and a bad `--since` is one error line (exit 2)."""
    env = clean_env(home)
    done = await asyncio.to_thread(kb, env, "gaps", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["answered"] == 4
    assert [sorted(gap["examples"]) for gap in report["gaps"]] == [sorted(ABSENT[:2]), [ABSENT[2]]]
    assert all(gap["reasons"] == {"notice": gap["count"]} and gap["missing"] for gap in report["gaps"])
    page_path = tmp_path / "gaps.html"
    text = await asyncio.to_thread(kb, env, "gaps", "--since", "7d", "--html", str(page_path))
    assert text.stdout.startswith("3 of 4 answered question(s) are gaps, in 2 topic(s):")
    page = page_path.read_text(encoding="utf-8")
    assert "3 of 4 answered question(s)" in page and all(question in page for question in ABSENT)
    assert page.count('<section class="topic">') == 2 and "年假" not in page
    assert "<script" not in page and "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    other = json.loads((await asyncio.to_thread(kb, env, "gaps", "--dataset", "other", "--json")).stdout)
    assert other["answered"] == 0 and other["gaps"] == []
    bad = await asyncio.to_thread(kb, env, "gaps", "--since", "last week")
    assert bad.returncode == 2 and bad.stderr.startswith("error: --since takes a duration")


class _TopicEmbedder:
    """Embedder fake: a question about 期权 points one way, anything else the other (unit vectors)."""

    name, dimension = "topics", 2

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0, 0.0] if "期权" in text else [0.0, 1.0] for text in texts]

    async def embed_query(self, text: str) -> list[float]:
        return (await self.embed_documents([text]))[0]


async def test_find_gaps_reads_the_period_keeps_the_datasets_asked_and_says_when_it_stopped_reading() -> None:
    """find_gaps over the records port: only gaps are grouped, a dataset filter keeps the questions searched
    in it, and a period holding more than the read limit is reported as truncated."""
    store = InMemoryConversationStore()
    in_docs = RetrievalTrace(datasets=("docs",))
    for record in (
        _record(1, "期权怎么行权", notice="n", trace=in_docs),
        _record(2, "期权何时归属", feedback=(Verdict("U1", "down"),), trace=in_docs),
        _record(3, "停车费多少", notice="n", trace=RetrievalTrace(datasets=("other",))),
        _record(4, "年假几天", trace=in_docs),
    ):
        store.records[record.id] = record
    report = await find_gaps(store, _TopicEmbedder(), since=0.0)
    assert (report.answered, report.truncated) == (4, False)
    assert [gap.count for gap in report.gaps] == [2, 1]
    docs_only = await find_gaps(store, _TopicEmbedder(), since=0.0, datasets=["docs"])
    assert [gap.examples for gap in docs_only.gaps] == [("期权何时归属", "期权怎么行权")]
    recent = await find_gaps(store, _TopicEmbedder(), since=0.0, limit=2)
    assert (recent.answered, recent.truncated) == (2, True)


async def test_recent_gaps_are_found_again_only_after_their_time_to_live() -> None:
    """RecentGaps keeps its report for `ttl` seconds: a gap recorded meanwhile shows after the TTL passes."""
    store = InMemoryConversationStore()
    store.records[1] = _record(1, "期权怎么行权", notice="n")
    now = [1000.0]
    recent = RecentGaps(store, _TopicEmbedder(), days=30, ttl=600, clock=lambda: now[0])
    assert [gap.count for gap in (await recent()).gaps] == [1]
    store.records[2] = _record(2, "期权何时归属", notice="n")
    now[0] += 599
    assert [gap.count for gap in (await recent()).gaps] == [1]
    now[0] += 1
    assert [gap.count for gap in (await recent()).gaps] == [2]
