"""The multi-hop loop (docs/design.md#the-retrieval-loop): rounds, dedup, stop reasons, caps and budgets."""

from __future__ import annotations

from core.answering.trace_view import render_trace_text
from core.errors import ModelOutputInvalid
from core.models import Assessment
from core.trace import RetrievalTrace, StopReason
from tests.retrieval.support import BUDGET_QUERY, QUESTION, TRACE_KEYS, Recorder, build, hit


async def test_insufficient_evidence_triggers_a_second_round_with_dedup() -> None:
    """An insufficient first round searches the gap query, and a paragraph found twice is kept once."""
    retriever, kb, engine, _ = build()
    kb.script(QUESTION, [hit("p1", "第二十条 六十日内提出行政复议申请"), hit("p2", "行政复议申请期限")])
    kb.script(BUDGET_QUERY, [hit("p2", "行政复议申请期限"), hit("p3", "行政审批服务中心预算 120 万元")])
    engine.assessments.extend(
        [
            Assessment(sufficient=False, missing="缺少预算金额", queries=(BUDGET_QUERY,)),
            Assessment(sufficient=True),
        ]
    )
    emit = Recorder()
    outcome = await retriever.retrieve(
        QUESTION, datasets=["ds"], search_mode="blend", retrieval_mode="multi", emit=emit
    )
    assert kb.queries == [QUESTION, BUDGET_QUERY]
    assert sorted(h.id for h in outcome.hits) == ["p1", "p2", "p3"]
    rounds = outcome.trace.rounds
    assert [r.new_paragraph_ids for r in rounds] == [("p1", "p2"), ("p3",)]
    assert rounds[0].next_queries == (BUDGET_QUERY,) and rounds[1].total_evidence == 3
    assert outcome.stop_reason is StopReason.SUFFICIENT and outcome.sufficient and outcome.missing == ""
    assert emit.retrieving == [(1, QUESTION), (2, BUDGET_QUERY)]
    assert emit.assessed == [(1, False, "缺少预算金额"), (2, True, "")]
    second_assessment = engine.calls("assess")[1]
    assert [h.id for h in second_assessment[1]] == ["p1", "p2", "p3"]
    assert second_assessment[2] == [QUESTION, BUDGET_QUERY]
    assert outcome.model_calls == 2


async def test_a_copy_of_a_held_passage_found_later_is_not_admitted() -> None:
    """A follow-up search returning a copy of a paragraph already in the evidence (another id, the same
    document name, heading and text: one file in two folders) admits only what is new."""
    retriever, kb, engine, _ = build()
    kb.script(QUESTION, [hit("p1", "第二十条 六十日内提出行政复议申请")])
    kb.script(
        BUDGET_QUERY, [hit("copy-of-p1", "第二十条 六十日内提出行政复议申请"), hit("p3", "预算 120 万元")]
    )
    engine.assessments.extend(
        [
            Assessment(sufficient=False, missing="缺少预算金额", queries=(BUDGET_QUERY,)),
            Assessment(sufficient=True),
        ]
    )
    outcome = await retriever.retrieve(
        QUESTION, datasets=["ds"], search_mode="blend", retrieval_mode="multi", emit=Recorder()
    )
    assert [h.id for h in outcome.hits] == ["p1", "p3"]
    assert [r.new_paragraph_ids for r in outcome.trace.rounds] == [("p1",), ("p3",)]


async def test_a_repeated_query_is_not_run_again() -> None:
    """A follow-up equal to a searched query after normalisation is skipped and the loop stops as duplicate."""
    retriever, kb, engine, _ = build()
    kb.script(QUESTION, [hit("p1")])
    repeated = "  请分别说明行政复议的一般申请期限，以及某乡2026年行政审批服务中心的预算金额！ "
    engine.assessments.append(Assessment(sufficient=False, missing="预算", queries=(repeated.upper(),)))
    outcome = await retriever.retrieve(
        QUESTION, datasets=["ds"], search_mode="blend", retrieval_mode="multi", emit=Recorder()
    )
    assert kb.queries == [QUESTION]
    assert outcome.stop_reason is StopReason.DUPLICATE_QUERY
    assert len(outcome.trace.rounds) == 1 and len(engine.calls("assess")) == 1


async def test_fresh_follow_ups_are_preferred_and_at_most_two_are_taken() -> None:
    """Of the proposed follow-ups, already-searched ones are dropped and at most two new ones run."""
    retriever, kb, engine, _ = build()
    kb.script(QUESTION, [hit("p1")])
    engine.assessments.extend(
        [
            Assessment(
                sufficient=False, missing="x", queries=(QUESTION, "预算 一", "  ", "预算 二", "预算 三")
            ),
            Assessment(sufficient=True),
        ]
    )
    kb.script("预算 一", [hit("p2")])
    outcome = await retriever.retrieve(
        QUESTION, datasets=["ds"], search_mode="blend", retrieval_mode="multi", emit=Recorder()
    )
    assert kb.queries == [QUESTION, "预算 一", "预算 二"]
    assert outcome.trace.rounds[0].next_queries == ("预算 一", "预算 二")


async def test_no_new_evidence_stops_the_loop() -> None:
    """A second round that only finds known paragraphs stops with no_new_evidence."""
    retriever, kb, engine, _ = build()
    kb.script(QUESTION, [hit("p1"), hit("p2")])
    kb.script(BUDGET_QUERY, [hit("p2")])
    engine.assessments.extend(
        [
            Assessment(sufficient=False, missing="预算", queries=(BUDGET_QUERY,)),
            Assessment(sufficient=False, missing="预算", queries=("另一个查询",)),
        ]
    )
    outcome = await retriever.retrieve(
        QUESTION, datasets=["ds"], search_mode="blend", retrieval_mode="multi", emit=Recorder()
    )
    assert outcome.stop_reason is StopReason.NO_NEW_EVIDENCE
    assert [r.new_paragraph_ids for r in outcome.trace.rounds] == [("p1", "p2"), ()]
    assert not outcome.sufficient and outcome.missing == "预算"
    assert outcome.trace.stop_label("zh") == "未发现新增资料"


async def test_empty_evidence_is_never_sufficient() -> None:
    """An assessor that calls empty evidence sufficient is overruled, and the gap says nothing was found."""
    retriever, _, engine, _ = build()
    engine.assessments.append(Assessment(sufficient=True))
    emit = Recorder()
    outcome = await retriever.retrieve(
        "zzzz qqqq", datasets=["ds"], search_mode="blend", retrieval_mode="multi", emit=emit
    )
    assert outcome.hits == () and not outcome.sufficient
    assert outcome.stop_reason is StopReason.NO_FOLLOWUP_QUERY
    assert outcome.trace.rounds[0].sufficient is False
    assert outcome.missing == "no relevant evidence was found"
    assert emit.assessed == [(1, False, "no relevant evidence was found")]


async def test_an_invalid_assessment_is_recorded_as_unfinished() -> None:
    """A non-boolean sufficient stops with assessment_error and is never read as sufficient."""
    retriever, kb, engine, _ = build()
    kb.script(QUESTION, [hit("p1")])
    engine.assessments.append(Assessment(sufficient="yes", queries=("下一轮",)))  # type: ignore[arg-type]
    emit = Recorder()
    outcome = await retriever.retrieve(
        QUESTION, datasets=["ds"], search_mode="blend", retrieval_mode="multi", emit=emit
    )
    assert outcome.stop_reason is StopReason.ASSESSMENT_ERROR and not outcome.sufficient
    assert outcome.missing == "证据充分性评估失败,无法确认已覆盖全部问题"
    assert outcome.trace.rounds[0].sufficient is False
    assert kb.queries == [QUESTION] and [h.id for h in outcome.hits] == ["p1"]
    assert emit.assessed == [(1, False, outcome.missing)]


async def test_a_failed_assessment_call_is_recorded_as_unfinished() -> None:
    """An assessor raising a model error stops with assessment_error, keeping the evidence found."""
    retriever, kb, engine, _ = build()
    kb.script(QUESTION, [hit("p1")])
    engine.assessments.append(ModelOutputInvalid("not json"))
    outcome = await retriever.retrieve(
        QUESTION, datasets=["ds"], search_mode="blend", retrieval_mode="multi", emit=Recorder()
    )
    assert outcome.stop_reason is StopReason.ASSESSMENT_ERROR and not outcome.sufficient
    assert [h.id for h in outcome.hits] == ["p1"]


async def test_the_round_cap_holds() -> None:
    """With new evidence and new queries every round, the loop still stops after max_rounds."""
    retriever, kb, engine, _ = build(max_rounds=2)
    kb.script(QUESTION, [hit("p1")])
    kb.script("第二轮", [hit("p2")])
    kb.script("第三轮", [hit("p3")])
    engine.assessments.extend(
        [
            Assessment(sufficient=False, missing="a", queries=("第二轮",)),
            Assessment(sufficient=False, missing="b", queries=("第三轮",)),
        ]
    )
    outcome = await retriever.retrieve(
        QUESTION, datasets=["ds"], search_mode="blend", retrieval_mode="multi", emit=Recorder()
    )
    assert outcome.stop_reason is StopReason.MAX_ROUNDS
    assert kb.queries == [QUESTION, "第二轮"] and len(outcome.trace.rounds) == 2
    assert outcome.missing == "b"


async def test_no_datasets_makes_no_search_and_no_model_call() -> None:
    """Without datasets nothing is searched, no model (vote or assessment) is called, and the reason says so."""
    retriever, kb, engine, _ = build()
    outcome = await retriever.retrieve(
        "Which is older, Harvard or Yale?",
        datasets=[],
        search_mode="blend",
        retrieval_mode="auto",
        emit=Recorder(),
    )
    assert outcome.stop_reason is StopReason.NO_DATASETS and not outcome.sufficient
    assert engine.history == [] and kb.requests == [] and outcome.model_calls == 0
    assert outcome.trace.rounds == () and outcome.trace.stop_label("en") == "no knowledge base configured"
    assert set(outcome.trace.to_json()) == TRACE_KEYS


async def test_each_follow_up_round_keeps_at_most_the_best_new_candidates() -> None:
    """Round 1 keeps the first search whole; a follow-up round returning twelve new paragraphs keeps the best eight."""
    retriever, kb, engine, _ = build(candidates_per_round=8)
    kb.script("预算", [hit(f"q{i:02d}", score=0.9) for i in range(10)])
    kb.script("预算 明细", [hit(f"p{i:02d}", score=0.3 + i * 0.05) for i in range(12)])
    engine.assessments.extend(
        [Assessment(sufficient=False, queries=("预算 明细",)), Assessment(sufficient=True)]
    )
    outcome = await retriever.retrieve(
        "预算", datasets=["ds"], search_mode="blend", retrieval_mode="multi", emit=Recorder()
    )
    first, second = outcome.trace.rounds
    assert len(first.new_paragraph_ids) == 10
    assert sorted(second.new_paragraph_ids) == [f"p{i:02d}" for i in range(4, 12)]
    assert len(outcome.hits) == 18


async def test_the_cap_can_apply_to_the_first_round_too() -> None:
    """With cap_first_round the first search is cut to the best eight as well."""
    retriever, kb, _, _ = build(candidates_per_round=8, cap_first_round=True)
    kb.script("预算", [hit(f"p{i:02d}", score=0.3 + i * 0.05) for i in range(12)])
    outcome = await retriever.retrieve(
        "预算", datasets=["ds"], search_mode="blend", retrieval_mode="multi", emit=Recorder()
    )
    assert sorted(outcome.trace.rounds[0].new_paragraph_ids) == [f"p{i:02d}" for i in range(4, 12)]


async def test_the_evidence_token_budget_stops_the_loop() -> None:
    """Paragraphs beyond the evidence token budget are not kept and the loop stops with evidence_budget."""
    retriever, kb, engine, _ = build(evidence_tokens=1000)
    long_text = "行政复议 预算 金额 " * 50
    kb.script(QUESTION, [hit(f"p{i}", long_text + str(i), score=0.9 - i / 10) for i in range(4)])
    engine.assessments.append(Assessment(sufficient=False, missing="预算", queries=("更多",)))
    outcome = await retriever.retrieve(
        QUESTION, datasets=["ds"], search_mode="blend", retrieval_mode="multi", emit=Recorder()
    )
    assert outcome.stop_reason is StopReason.EVIDENCE_BUDGET
    assert 1 <= len(outcome.hits) < 4 and kb.queries == [QUESTION]


async def test_the_paragraph_cap_stops_the_loop() -> None:
    """Once max_paragraphs paragraphs are held, further ones are refused and the loop stops on the budget."""
    retriever, kb, engine, _ = build(max_paragraphs=3)
    kb.script(QUESTION, [hit(f"p{i}") for i in range(5)])
    engine.assessments.append(Assessment(sufficient=False, missing="x", queries=("更多",)))
    outcome = await retriever.retrieve(
        QUESTION, datasets=["ds"], search_mode="blend", retrieval_mode="multi", emit=Recorder()
    )
    assert outcome.stop_reason is StopReason.EVIDENCE_BUDGET and len(outcome.hits) == 3


async def test_sufficient_is_checked_before_the_budget() -> None:
    """When the budget ran out in a round judged sufficient, the stop reason is sufficient (checked first)."""
    retriever, kb, engine, _ = build(max_paragraphs=2)
    kb.script(QUESTION, [hit(f"p{i}") for i in range(4)])
    engine.assessments.append(Assessment(sufficient=True))
    outcome = await retriever.retrieve(
        QUESTION, datasets=["ds"], search_mode="blend", retrieval_mode="multi", emit=Recorder()
    )
    assert outcome.stop_reason is StopReason.SUFFICIENT and outcome.sufficient


async def test_a_long_gap_and_long_queries_are_clipped() -> None:
    """The recorded gap is clipped to 400 tokens and each follow-up query to 500 tokens."""
    retriever, kb, engine, _ = build(max_rounds=2)
    kb.script(QUESTION, [hit("p1")])
    engine.assessments.extend(
        [
            Assessment(sufficient=False, missing="缺口 " * 2000, queries=("查询 " * 2000,)),
            Assessment(sufficient=False, missing="缺口 " * 2000),
        ]
    )
    outcome = await retriever.retrieve(
        QUESTION, datasets=["ds"], search_mode="blend", retrieval_mode="multi", emit=Recorder()
    )
    from core.budget import count_tokens

    assert count_tokens(outcome.missing) <= 400
    assert count_tokens(kb.queries[1]) <= 500


async def test_a_partial_verdict_is_searched_on_and_reaches_the_outcome_and_trace() -> None:
    """Partial support (Assessment.partial) is still insufficient, so the loop runs its gap query; the last
    round's partial verdict is the outcome's, kept in the stored trace and shown by the trace view."""
    retriever, kb, engine, _ = build()
    kb.script(QUESTION, [hit("p1", "第二十条 六十日内提出行政复议申请")])
    kb.script(BUDGET_QUERY, [hit("p2", "行政审批服务中心经费")])
    engine.assessments.extend(
        [
            Assessment(sufficient=False, missing="预算", queries=(BUDGET_QUERY,), partial=True),
            Assessment(sufficient=False, missing="预算", partial=True),
        ]
    )
    outcome = await retriever.retrieve(
        QUESTION, datasets=["ds"], search_mode="blend", retrieval_mode="multi", emit=Recorder()
    )
    assert kb.queries == [QUESTION, BUDGET_QUERY]
    assert not outcome.sufficient and outcome.partial and outcome.trace.partial
    assert [step.partial for step in outcome.trace.rounds] == [True, True]
    stored = RetrievalTrace.from_json(outcome.trace.to_json())
    assert stored.partial and stored.rounds[-1].partial
    assert "部分（缺口不影响结论，不加提示）" in render_trace_text(stored, "zh")
