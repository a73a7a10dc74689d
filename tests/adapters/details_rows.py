"""Record details as the code before typed details stored them (no "v"), and older, partial rows.

ANSWERED_AGAIN and FAILED were produced by running that pipeline over the test fakes (the iterative
retriever forced multi-hop, the compacting context loader over a real SQLite store, a rewrite and an answer
model failing into the fallback engine, two people's feedback, then the question asked again, answered and
voted on) and copying the details column as the store held it.
"""

from __future__ import annotations

from typing import Any

ANSWERED_AGAIN: dict[str, Any] = {
    "previous_answers": [
        {
            "status": "answered",
            "answer": "模型服务暂时不可用,以下是直接摘自资料的摘录式回答。\n\n年假 5 天 [1],病假见 [2]。\n\n注意：该问题需要多步推理，但当前资料可能不足以完整回答，以上结论仅供参考。",
            "rewritten": "那病假呢?",
            "updated_at": 1796188976.94035,
            "details": {
                "lang": "zh",
                "context": {
                    "enabled": True,
                    "compacted": True,
                    "revision": 3,
                    "compacted_rounds": 3,
                    "through_record_id": 3,
                    "recent_rounds": 1,
                    "token_budget": 600,
                    "threshold_exceeded": True,
                    "compaction_reason": "token_budget_exceeded",
                    "estimated_tokens": 560,
                    "summary_calls": 1,
                },
                "rewrite_error": "model_truncated: the rewrite was cut",
                "rewrite_engine": "extractive (fallback)",
                "trace": {
                    "rewritten": "那病假呢?",
                    "datasets": ["ds"],
                    "search_mode": "blend",
                    "mode": "multi",
                    "escalated": False,
                    "complexity": {
                        "decision": "multi",
                        "source": "forced",
                        "rule_score": 0.0,
                        "classifier_probability": None,
                        "model_vote": None,
                        "reason": "retrieval_mode=multi",
                        "features": {
                            "comparison_markers": 0,
                            "logical_connectors": 0,
                            "entities": 0,
                            "bridge_entities": 0,
                            "tokens": 10,
                            "markers": [],
                            "entity_names": [],
                        },
                    },
                    "rounds": [
                        {
                            "round": 1,
                            "queries": ["那病假呢?"],
                            "new_paragraph_ids": ["h2"],
                            "total_evidence": 1,
                            "sufficient": False,
                            "missing": "病假证明的要求",
                            "next_queries": ["病假 证明"],
                        },
                        {
                            "round": 2,
                            "queries": ["病假 证明"],
                            "new_paragraph_ids": ["h1"],
                            "total_evidence": 2,
                            "sufficient": False,
                            "missing": "病假证明的要求",
                            "next_queries": [],
                        },
                    ],
                    "stop_reason": "no_followup_query",
                    "stop_label_zh": "无后续查询",
                    "stop_label_en": "no follow-up query",
                    "sufficient": False,
                    "missing": "病假证明的要求",
                    "rerank": {"method": "local", "candidates": 2, "kept": 2},
                    "run_time": 0.0013,
                },
                "answer_error": "model_unavailable: answer model down",
                "engine": "extractive (fallback)",
                "notice": "注意：该问题需要多步推理，但当前资料可能不足以完整回答，以上结论仅供参考。",
                "citations": [
                    {
                        "n": 1,
                        "document": "预算.xlsx",
                        "heading": "",
                        "source": "files/budget.xlsx",
                        "sheet": "Budget",
                        "row_start": 2,
                        "row_end": 40,
                        "paragraph_id": "h2",
                    },
                    {
                        "n": 2,
                        "document": "员工手册.pdf",
                        "heading": "第三章 考勤",
                        "source": "https://docs.example.com/handbook.pdf",
                        "page": 12,
                        "paragraph_id": "h1",
                    },
                ],
                "evidence_ids": ["h2", "h1"],
                "usage": {"prompt_tokens": 170, "completion_tokens": 36, "model_calls": 5},
                "timings": {
                    "context": 0.0018,
                    "rewrite": 0.0002,
                    "retrieval": 0.0013,
                    "generation": 0.0002,
                    "total": 0.0042,
                },
                "feedback": {
                    "slack:T1:U1": {"value": "down", "at": 1796188976.9407995},
                    "slack:T1:U2": {"value": "up", "at": 1796188976.941098},
                },
            },
        }
    ],
    "lang": "zh",
    "context": {
        "enabled": True,
        "compacted": False,
        "revision": 3,
        "compacted_rounds": 3,
        "through_record_id": 3,
        "recent_rounds": 1,
        "token_budget": 600,
        "threshold_exceeded": False,
        "compaction_reason": "under_budget",
        "estimated_tokens": 560,
    },
    "rewrite_error": "model_unchanged: the model returned the question unchanged",
    "rewrite_engine": "extractive (fallback)",
    "trace": {
        "rewritten": "那病假呢?",
        "datasets": ["ds"],
        "search_mode": "blend",
        "mode": "multi",
        "escalated": False,
        "complexity": {
            "decision": "multi",
            "source": "forced",
            "rule_score": 0.0,
            "classifier_probability": None,
            "model_vote": None,
            "reason": "retrieval_mode=multi",
            "features": {
                "comparison_markers": 0,
                "logical_connectors": 0,
                "entities": 0,
                "bridge_entities": 0,
                "tokens": 10,
                "markers": [],
                "entity_names": [],
            },
        },
        "rounds": [
            {
                "round": 1,
                "queries": ["那病假呢?"],
                "new_paragraph_ids": ["h2"],
                "total_evidence": 1,
                "sufficient": True,
                "missing": "",
                "next_queries": [],
            }
        ],
        "stop_reason": "sufficient",
        "stop_label_zh": "资料充分",
        "stop_label_en": "evidence sufficient",
        "sufficient": True,
        "missing": "",
        "rerank": {"method": "local", "candidates": 1, "kept": 1},
        "run_time": 0.0008,
    },
    "engine": "fake",
    "notice": None,
    "citations": [
        {
            "n": 1,
            "document": "预算.xlsx",
            "heading": "",
            "source": "files/budget.xlsx",
            "sheet": "Budget",
            "row_start": 2,
            "row_end": 40,
            "paragraph_id": "h2",
        }
    ],
    "evidence_ids": ["h2"],
    "usage": {"prompt_tokens": 130, "completion_tokens": 16, "model_calls": 3},
    "timings": {"context": 0.001, "rewrite": 0.0, "retrieval": 0.0008, "generation": 0.0001, "total": 0.0023},
    "feedback": {"slack:T1:U1": {"value": "up", "at": 1796188976.9442415}},
}

FAILED: dict[str, Any] = {
    "lang": "zh",
    "context": {
        "enabled": True,
        "compacted": False,
        "revision": 3,
        "compacted_rounds": 3,
        "through_record_id": 3,
        "recent_rounds": 2,
        "token_budget": 600,
        "threshold_exceeded": False,
        "compaction_reason": "under_budget",
        "estimated_tokens": 585,
    },
    "rewrite_error": "model_unchanged: the model returned the question unchanged",
    "rewrite_engine": "extractive (fallback)",
    "timings": {"context": 0.001, "rewrite": 0.0},
    "user_message": "这里还没有配置知识库,无法回答。",
    "failure": "no_knowledge_base: No knowledge base is configured here.",
}

# What interrupt_pending wrote for a question cut off by a restart.
INTERRUPTED: dict[str, Any] = {"failure": "interrupted: the bot stopped while answering"}
