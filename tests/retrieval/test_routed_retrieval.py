"""The routed retriever around the loop: single-hop search, escalation, the one final rerank, the trace shape."""

from __future__ import annotations

from core.models import Assessment
from core.retrieval.iterative import IterativeRetriever
from core.retrieval.single_search import single_search_trace
from core.trace import RerankSummary, StopReason
from tests.fakes import FakeEngine, FakeKnowledgeBase
from tests.retrieval.support import (
    QUESTION,
    ROUND_KEYS,
    TRACE_KEYS,
    FailingReranker,
    Recorder,
    build,
    hit,
)


async def test_a_covered_single_hop_question_is_one_search_and_one_assessment() -> None:
    """A question routed single runs one search, one assessment, and keeps the single-search trace shape."""
    retriever, kb, engine, reranker = build()
    kb.script("行政复议的申请期限是多久", [hit("p1", score=0.8), hit("p2", score=0.6)])
    emit = Recorder()
    outcome = await retriever.retrieve(
        "行政复议的申请期限是多久", datasets=["ds"], search_mode="blend", retrieval_mode="auto", emit=emit
    )
    assert len(engine.calls("assess")) == 1 and engine.calls("vote") == []
    assert outcome.stop_reason is StopReason.SINGLE_SEARCH and outcome.sufficient
    complexity = outcome.trace.complexity
    assert complexity is not None and complexity.source == "rule" and outcome.trace.mode == "single"
    baseline = single_search_trace(
        [], query="q", reason=StopReason.SINGLE_SEARCH, run_time=0, sufficient=True
    ).to_json()
    stored = outcome.trace.to_json()
    assert set(stored) == set(baseline) | {"complexity", "rerank"} == TRACE_KEYS
    assert set(stored["rounds"][0]) == set(baseline["rounds"][0]) == ROUND_KEYS
    assert emit.retrieving == [(1, "行政复议的申请期限是多久")] and emit.assessed == [(1, True, "")]
    assert len(reranker.calls) == 1 and outcome.model_calls == 1


async def test_a_single_hop_search_with_an_unsupported_part_escalates_into_the_loop() -> None:
    """Whatever its scores, a single search the assessor finds incomplete escalates, reusing its round 1."""
    retriever, kb, engine, reranker = build()
    question = "行政复议的申请期限是多久"
    kb.script(question, [hit("p1", score=0.95)])
    kb.script("行政复议 期限 六十日", [hit("p2", score=0.9)])
    engine.assessments.extend(
        [
            Assessment(sufficient=False, missing="期限条文", queries=("行政复议 期限 六十日",)),
            Assessment(sufficient=True),
        ]
    )
    emit = Recorder()
    outcome = await retriever.retrieve(
        question, datasets=["ds"], search_mode="blend", retrieval_mode="auto", emit=emit
    )
    assert outcome.trace.mode == "multi" and outcome.trace.escalated is True
    assert kb.queries == [question, "行政复议 期限 六十日"]
    assert emit.retrieving == [(1, question), (2, "行政复议 期限 六十日")]
    assert outcome.stop_reason is StopReason.SUFFICIENT and len(reranker.calls) == 1
    assert [r.round for r in outcome.trace.rounds] == [1, 2] and len(engine.calls("assess")) == 2


async def test_a_forced_single_search_is_final_and_says_what_is_missing() -> None:
    """Under retrieval_mode=single an incomplete search is not escalated: it is reported not sufficient."""
    retriever, kb, engine, _ = build()
    kb.script("行政复议的申请期限是多久", [hit("p1", score=0.2)])
    engine.assessments.append(Assessment(sufficient=False, missing="期限", queries=("期限 条文",)))
    outcome = await retriever.retrieve(
        "行政复议的申请期限是多久",
        datasets=["ds"],
        search_mode="blend",
        retrieval_mode="single",
        emit=Recorder(),
    )
    complexity = outcome.trace.complexity
    assert outcome.trace.escalated is False and complexity is not None and complexity.source == "forced"
    assert kb.queries == ["行政复议的申请期限是多久"]
    assert outcome.sufficient is False and outcome.missing == "期限"
    assert outcome.stop_reason is StopReason.SINGLE_SEARCH


async def test_the_first_search_is_at_least_the_single_search_depth_and_survives_the_budget() -> None:
    """A long question's first search is 10 deep (not its tier's 8), and the rerank cannot push those out."""
    long_question = "行政复议申请人对行政复议决定不服的应当在多少日内向人民法院提起行政诉讼"
    retriever, kb, engine, _ = build(max_paragraphs=12)
    first = [hit(f"a{i}", score=0.9 - i * 0.01) for i in range(12)]
    kb.script(long_question, first)
    kb.script("后续", [hit(f"b{i}", f"后续{i} " * 3 + "行政诉讼 " * 20, score=0.99) for i in range(8)])
    engine.assessments.extend([Assessment(sufficient=False, queries=("后续",)), Assessment(sufficient=True)])
    outcome = await retriever.retrieve(
        long_question, datasets=["ds"], search_mode="blend", retrieval_mode="multi", emit=Recorder()
    )
    assert kb.requests[0].limit == 10
    kept = [h.id for h in outcome.hits]
    assert {f"a{i}" for i in range(10)} <= set(kept) and len(kept) == 12
    assert kept[0].startswith("b")  # the rerank reordered the evidence, and still kept the first search


def test_fitting_the_budget_keeps_the_protected_hits_first() -> None:
    """With room for three, the two protected hits stay even when the rerank put them last."""
    from core.retrieval.evidence import LoopLimits, fit_budget

    ranked = [hit("x1"), hit("x2"), hit("x3"), hit("p1"), hit("p2")]
    kept = fit_budget(ranked, LoopLimits(max_paragraphs=3), keep=["p1", "p2"])
    assert [h.id for h in kept] == ["x1", "p1", "p2"]
    assert [h.id for h in fit_budget(ranked, LoopLimits(max_paragraphs=3))] == ["x1", "x2", "x3"]


async def test_the_final_rerank_runs_exactly_once_over_all_rounds() -> None:
    """Three rounds of evidence are reranked together, once, against the full question."""
    retriever, kb, engine, reranker = build()
    kb.script(QUESTION, [hit("p1")])
    kb.script("第二轮", [hit("p2")])
    kb.script("第三轮", [hit("p3")])
    engine.assessments.extend(
        [
            Assessment(sufficient=False, queries=("第二轮",)),
            Assessment(sufficient=False, queries=("第三轮",)),
            Assessment(sufficient=False, queries=("第四轮",)),
        ]
    )
    outcome = await retriever.retrieve(
        QUESTION, datasets=["ds"], search_mode="blend", retrieval_mode="multi", emit=Recorder()
    )
    assert reranker.calls == [(QUESTION, ["p1", "p2", "p3"])]
    assert outcome.trace.rerank == RerankSummary(method="counting", candidates=3, kept=3)
    assert outcome.trace.to_json()["rerank"] == {"method": "counting", "candidates": 3, "kept": 3}


async def test_a_failing_reranker_falls_back_to_the_local_one_and_says_so() -> None:
    """When the configured reranker fails, the local reranker orders the evidence and the trace records it."""
    retriever, kb, _, _ = build(reranker=FailingReranker())
    kb.script("行政复议的申请期限是多久", [hit("p1", score=0.8)])
    outcome = await retriever.retrieve(
        "行政复议的申请期限是多久",
        datasets=["ds"],
        search_mode="blend",
        retrieval_mode="single",
        emit=Recorder(),
    )
    assert [h.id for h in outcome.hits] == ["p1"]
    assert outcome.trace.rerank == RerankSummary(
        method="local", candidates=1, kept=1, fallback_from="http", error="model_unavailable"
    )
    assert outcome.trace.to_json()["rerank"] == {
        "method": "local",
        "fallback_from": "http",
        "error": "model_unavailable",
        "candidates": 1,
        "kept": 1,
    }


async def test_the_multi_hop_trace_has_the_documented_shape() -> None:
    """The multi-hop trace carries every documented key, per-round keys, labels and the routing decision."""
    retriever, kb, engine, _ = build()
    kb.script(QUESTION, [hit("p1")])
    engine.votes.append(True)
    engine.assessments.append(Assessment(sufficient=False, missing="预算", queries=()))
    outcome = await retriever.retrieve(
        QUESTION, datasets=["ds"], search_mode="blend", retrieval_mode="auto", emit=Recorder()
    )
    trace = outcome.trace.to_json()
    assert set(trace) == TRACE_KEYS and set(trace["rounds"][0]) == ROUND_KEYS
    assert trace["stop_reason"] == "no_followup_query" and trace["stop_label_zh"] == "无后续查询"
    assert trace["complexity"]["source"] == "model" and trace["complexity"]["model_vote"] is True
    complexity = outcome.trace.complexity
    assert complexity is not None and complexity.source == "model" and complexity.model_vote is True
    assert outcome.trace.stop_reason is StopReason.NO_FOLLOWUP_QUERY
    assert outcome.model_calls == 2 and outcome.usage.prompt_tokens == 25
    assert isinstance(trace["run_time"], float)


async def test_feature_extraction_and_rerank_tokenisation_do_not_block_the_event_loop() -> None:
    """While jieba works on long evidence, a heartbeat on the event loop keeps ticking."""
    import asyncio
    import time

    from core.retrieval.rerank import LocalReranker

    texts = [
        "行政复议机关应当自受理申请之日起六十日内作出行政复议决定 budget " * 80 + str(i) for i in range(40)
    ]
    hits = [hit(f"p{i}", text) for i, text in enumerate(texts)]
    reranker = LocalReranker()
    await reranker.rerank("warm up", hits[:1])
    started = time.perf_counter()
    await reranker.rerank("行政复议的期限", hits)
    duration = time.perf_counter() - started
    gaps: list[float] = []
    stop = asyncio.Event()

    async def heartbeat() -> None:
        last = time.perf_counter()
        while not stop.is_set():
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    ticker = asyncio.create_task(heartbeat())
    await reranker.rerank("行政复议的期限", hits)
    stop.set()
    await ticker
    assert duration > 0.05
    assert max(gaps) < duration / 2


async def test_the_final_evidence_puts_the_current_version_of_a_law_first() -> None:
    """The superseded text found first moves behind the current one; both stay in the evidence."""
    retriever, kb, _, _ = build()
    old = hit("old", "六十日内提出", score=0.99, document="行政复议法(2017-09-01)")
    new = hit("new", "六十日内提出", score=0.80, document="行政复议法(2023-09-01)")
    kb.script("行政复议的申请期限是多久", [old, new])
    outcome = await retriever.retrieve(
        "行政复议的申请期限是多久",
        datasets=["ds"],
        search_mode="blend",
        retrieval_mode="single",
        emit=Recorder(),
    )
    assert [h.id for h in outcome.hits] == ["new", "old"]


async def test_a_forced_single_search_is_judged_by_the_key_term_check_without_a_model_call() -> None:
    """retrieval_mode=single with a key-term check: no assessment call; a part lacking its key terms gets
    the notice's gap, a covered question is sufficient."""
    from tests.retrieval.test_checked_engine import FixedCheck

    kb = FakeKnowledgeBase()
    kb.script("期限和预算金额分别是多少", [hit("p1")])
    engine = FakeEngine()
    retriever = IterativeRetriever(kb=kb, engine=engine, key_terms=FixedCheck("预算金额"))
    gap = await retriever.retrieve(
        "期限和预算金额分别是多少",
        datasets=["ds"],
        search_mode="blend",
        retrieval_mode="single",
        emit=Recorder(),
    )
    assert engine.calls("assess") == [] and gap.model_calls == 0
    assert not gap.sufficient and gap.missing == "资料中没有「预算金额」的关键信息"
    covered = IterativeRetriever(kb=kb, engine=engine, key_terms=FixedCheck())
    outcome = await covered.retrieve(
        "期限和预算金额分别是多少",
        datasets=["ds"],
        search_mode="blend",
        retrieval_mode="single",
        emit=Recorder(),
    )
    assert outcome.sufficient and engine.calls("assess") == []
