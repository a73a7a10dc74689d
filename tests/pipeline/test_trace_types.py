"""The retrieval trace as typed values: a round trip, rows written by today's pipeline, older partial rows."""

from __future__ import annotations

from typing import Any

from core.commands import Ask
from core.events import Done, Failed
from core.models import ConversationScope
from core.trace import (
    ComplexityFeatures,
    RerankSummary,
    RetrievalTrace,
    RoundStep,
    RouteDecision,
    StopReason,
    record_trace,
)
from tests.fakes import FakeEngine, FakeKnowledgeBase, InMemoryConversationStore
from tests.pipeline.conftest import KEY, Harness, looped_pipeline

# Stored by the pipeline (IterativeRetriever, extractive engine, the scenario knowledge base) for the
# compound question of tests/scenarios/test_compound_question.py, copied from the record's details["trace"].
MULTI_HOP_ROW: dict[str, Any] = {
    "rewritten": "请分别说明行政复议的一般申请期限,以及某乡 2026 年行政审批服务中心的预算金额",
    "datasets": ["kb"],
    "search_mode": "blend",
    "mode": "multi",
    "escalated": False,
    "complexity": {
        "decision": "multi",
        "source": "model",
        "rule_score": 0.3275,
        "classifier_probability": None,
        "model_vote": True,
        "reason": "rule score 0.33 undecided; no classifier configured; model voted multi",
        "features": {
            "comparison_markers": 0,
            "logical_connectors": 2,
            "entities": 1,
            "bridge_entities": 0,
            "tokens": 41,
            "markers": ["分别", "以及"],
            "entity_names": ["服务中心"],
        },
    },
    "rounds": [
        {
            "round": 1,
            "queries": ["请分别说明行政复议的一般申请期限,以及某乡 2026 年行政审批服务中心的预算金额"],
            "new_paragraph_ids": [
                "1e443a04c1f29b0fe0542a3f:997913fd225e:11",
                "1e443a04c1f29b0fe0542a3f:997913fd225e:19",
                "1e443a04c1f29b0fe0542a3f:997913fd225e:51",
                "827327773358b9ee9ced3eae:034c1498f49d:2",
                "1e443a04c1f29b0fe0542a3f:997913fd225e:21",
                "1e443a04c1f29b0fe0542a3f:997913fd225e:3",
                "1e443a04c1f29b0fe0542a3f:997913fd225e:20",
                "1e443a04c1f29b0fe0542a3f:997913fd225e:38",
                "1e443a04c1f29b0fe0542a3f:997913fd225e:7",
                "1e443a04c1f29b0fe0542a3f:997913fd225e:9",
            ],
            "total_evidence": 10,
            "sufficient": False,
            "missing": "缺少关于「某乡 2026 年行政审批服务中心的预算金额」的资料",
            "next_queries": ["某乡 2026 年行政审批服务中心的预算金额"],
        },
        {
            "round": 2,
            "queries": ["某乡 2026 年行政审批服务中心的预算金额"],
            "new_paragraph_ids": [
                "1e443a04c1f29b0fe0542a3f:997913fd225e:15",
                "1e443a04c1f29b0fe0542a3f:997913fd225e:16",
                "dd18cb2ab0016dcfb5a1c0e5:dcb7d02c6af6:2",
                "15249bdc5df9bc9b5db2de60:6506731605f3:0",
            ],
            "total_evidence": 14,
            "sufficient": False,
            "missing": "缺少关于「某乡 2026 年行政审批服务中心的预算金额」的资料",
            "next_queries": ["服务中心 2026 乡行政审批预算金额"],
        },
        {
            "round": 3,
            "queries": ["服务中心 2026 乡行政审批预算金额"],
            "new_paragraph_ids": [],
            "total_evidence": 14,
            "sufficient": False,
            "missing": "缺少关于「某乡 2026 年行政审批服务中心的预算金额」的资料",
            "next_queries": ["乡行政预算服务中心 2026"],
        },
    ],
    "stop_reason": "no_new_evidence",
    "stop_label_zh": "未发现新增资料",
    "stop_label_en": "no new evidence",
    "sufficient": False,
    "missing": "缺少关于「某乡 2026 年行政审批服务中心的预算金额」的资料",
    "rerank": {"method": "local", "candidates": 14, "kept": 14},
    "run_time": 0.3928,
}

# Stored by the pipeline with the plain single-search retriever (tests/pipeline/conftest.py) for "年假有几天?".
SINGLE_SEARCH_ROW: dict[str, Any] = {
    "rewritten": "年假有几天?",
    "datasets": ["ds"],
    "search_mode": "blend",
    "mode": "single",
    "escalated": False,
    "rounds": [
        {
            "round": 1,
            "queries": ["年假有几天?"],
            "new_paragraph_ids": ["p1"],
            "total_evidence": 1,
            "sufficient": True,
            "missing": "",
            "next_queries": [],
        }
    ],
    "stop_reason": "single_search",
    "stop_label_zh": "单次检索",
    "stop_label_en": "single search",
    "sufficient": True,
    "missing": "",
    "run_time": 0.0002,
}


def _full_trace() -> RetrievalTrace:
    features = ComplexityFeatures(1, 2, 3, 1, 40, markers=("分别", "以及"), entity_names=("行政复议法",))
    return RetrievalTrace(
        mode="multi",
        escalated=True,
        complexity=RouteDecision(
            "multi", "classifier", 0.45, "classifier probability 0.91", 0.91, None, features
        ),
        rounds=(
            RoundStep(1, ("期限",), ("p1", "p2"), 2, False, "预算", ("预算 金额",), overruled=True),
            RoundStep(2, ("预算 金额",), ("p3",), 3, True),
        ),
        stop_reason=StopReason.SUFFICIENT,
        sufficient=True,
        rerank=RerankSummary("local", 3, 3, fallback_from="http", error="model_unavailable"),
        run_time=0.1234,
        rewritten="期限和预算金额分别是多少",
        datasets=("kb", "other"),
        search_mode="keywords",
    )


def test_a_trace_survives_its_json_round_trip() -> None:
    """Every field, the overruled round and the rerank fallback included, reads back equal from its JSON."""
    trace = _full_trace()
    stored = trace.to_json()
    assert RetrievalTrace.from_json(stored) == trace
    assert stored["rounds"][0]["overruled"] is True and "overruled" not in stored["rounds"][1]
    assert stored["rerank"] == {
        "method": "local",
        "fallback_from": "http",
        "error": "model_unavailable",
        "candidates": 3,
        "kept": 3,
    }
    assert (stored["stop_label_zh"], stored["stop_label_en"]) == ("资料充分", "evidence sufficient")
    bare = RetrievalTrace(stop_reason=StopReason.NO_DATASETS)
    assert RetrievalTrace.from_json(bare.to_json()) == bare
    assert not {"rewritten", "datasets", "search_mode", "complexity", "rerank"} & set(bare.to_json())


def test_a_multi_hop_row_written_today_reads_as_typed_values_and_writes_back_unchanged() -> None:
    """The stored multi-hop row parses into rounds, a route decision and a stop reason, and to_json gives it back."""
    trace = RetrievalTrace.from_json(MULTI_HOP_ROW)
    assert trace.to_json() == MULTI_HOP_ROW
    assert trace.mode == "multi" and trace.escalated is False and trace.datasets == ("kb",)
    assert trace.stop_reason is StopReason.NO_NEW_EVIDENCE and trace.stop_label("zh") == "未发现新增资料"
    assert [step.round for step in trace.rounds] == [1, 2, 3]
    assert trace.rounds[1].queries == ("某乡 2026 年行政审批服务中心的预算金额",)
    assert trace.rounds[2].new_paragraph_ids == () and trace.rounds[2].total_evidence == 14
    decision = trace.complexity
    assert decision is not None and decision.source == "model" and decision.model_vote is True
    assert decision.classifier_probability is None and decision.rule_score == 0.3275
    assert decision.features is not None and decision.features.markers == ("分别", "以及")
    assert trace.rerank == RerankSummary("local", 14, 14)


def test_a_single_search_row_written_today_has_no_route_or_rerank() -> None:
    """The plain single-search retriever's row reads without complexity or rerank and writes back unchanged."""
    trace = RetrievalTrace.from_json(SINGLE_SEARCH_ROW)
    assert trace.to_json() == SINGLE_SEARCH_ROW
    assert trace.complexity is None and trace.rerank is None
    assert trace.stop_reason is StopReason.SINGLE_SEARCH and trace.rounds[0].new_paragraph_ids == ("p1",)


def test_an_old_partial_row_reads_with_defaults_and_keeps_an_unknown_stop_reason() -> None:
    """Missing keys take defaults, malformed values are ignored, and a stop reason this version lacks stays readable."""
    row = {
        "rounds": [{}, {"round": 2, "queries": ["x"], "sufficient": True}, "not a round"],
        "stop_reason": "gave_up",
        "complexity": {"source": "rules", "rule_score": "high"},
        "rerank": {},
        "datasets": "kb",
    }
    trace = RetrievalTrace.from_json(row)
    assert trace.rounds == (RoundStep(0), RoundStep(2, ("x",), sufficient=True))
    assert trace.stop_reason == "gave_up" and trace.stop_label("en") == "gave_up"
    assert trace.to_json()["stop_reason"] == "gave_up"
    assert trace.complexity == RouteDecision("single", "rules", 0.0, "")
    assert trace.rerank is None and trace.datasets is None and trace.rewritten is None
    assert (trace.mode, trace.escalated, trace.sufficient, trace.run_time) == ("single", False, False, 0.0)
    assert RetrievalTrace.from_json({}).stop_label("zh") == ""


def test_record_trace_is_none_without_a_stored_trace() -> None:
    """A record's details without a trace (or with an empty or malformed one) give None, a stored one its trace."""
    assert record_trace({}) is None
    assert record_trace({"trace": {}}) is None
    assert record_trace({"trace": ["rounds"]}) is None
    assert record_trace({"trace": SINGLE_SEARCH_ROW}) == RetrievalTrace.from_json(SINGLE_SEARCH_ROW)


async def test_the_pipeline_stores_the_retrieval_trace_with_what_it_searched(harness: Harness) -> None:
    """The stored trace is the retriever's trace with the rewritten question, datasets and search mode set."""
    harness.kb.add("p1", "年假一般为 5 天", document="休假制度")
    done = (await harness.ask("年假有几天?", search_mode="keywords"))[-1]
    assert isinstance(done, Done)
    stored = done.record.details.to_json()["trace"]
    assert set(stored) == set(SINGLE_SEARCH_ROW)
    trace = record_trace(done.record.details.to_json())
    assert trace is not None and trace.to_json() == stored and trace == done.record.details.trace
    assert (trace.rewritten, trace.datasets, trace.search_mode) == ("年假有几天?", ("ds",), "keywords")
    assert trace.stop_reason is StopReason.SINGLE_SEARCH and trace.rounds[0].queries == ("年假有几天?",)


async def test_the_routed_retriever_stores_every_key_of_todays_multi_hop_row() -> None:
    """Through the pipeline, the routed retriever's stored trace has exactly the keys of a row written today."""
    store, kb, engine = InMemoryConversationStore(), FakeKnowledgeBase(), FakeEngine()
    pipeline = looped_pipeline(store, kb, engine)
    kb.add("p1", "年假一般为 5 天", document="休假制度")
    question = Ask(KEY, "年假有几天?", ConversationScope(("ds",), retrieval_mode="multi"))
    done = await pipeline.answer(question)
    assert not isinstance(done, Failed)
    stored = done.details.to_json()["trace"]
    assert set(stored) == set(MULTI_HOP_ROW)
    assert set(stored["complexity"]) == set(MULTI_HOP_ROW["complexity"])
    assert set(stored["complexity"]["features"]) == set(MULTI_HOP_ROW["complexity"]["features"])
    assert set(stored["rounds"][0]) == set(MULTI_HOP_ROW["rounds"][0])
    assert set(stored["rerank"]) == set(MULTI_HOP_ROW["rerank"])
    trace = RetrievalTrace.from_json(stored)
    assert trace.to_json() == stored and trace.mode == "multi" and trace.complexity is not None
