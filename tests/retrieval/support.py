"""Small helpers for the retrieval tests: hits, an event recorder, counting and failing rerankers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.errors import ModelUnavailable
from core.events import Assessed, Progress, Retrieving
from core.models import Hit
from core.retrieval.iterative import IterativeRetriever, LoopLimits
from core.retrieval.rerank import LocalReranker
from tests.fakes import FakeEngine, FakeKnowledgeBase

QUESTION = "请分别说明行政复议的一般申请期限,以及某乡 2026 年行政审批服务中心的预算金额"
BUDGET_QUERY = "某乡 2026 年 部门预算 行政审批服务中心"
TRACE_KEYS = {
    "mode",
    "escalated",
    "complexity",
    "rounds",
    "stop_reason",
    "stop_label_zh",
    "stop_label_en",
    "sufficient",
    "missing",
    "rerank",
    "run_time",
}
ROUND_KEYS = {
    "round",
    "queries",
    "new_paragraph_ids",
    "total_evidence",
    "sufficient",
    "missing",
    "next_queries",
}


def hit(id: str, content: str = "", score: float = 0.9, *, document: str = "doc") -> Hit:
    """A paragraph hit with a given score."""
    return Hit(
        id=id,
        content=content or f"paragraph {id}",
        score=score,
        dataset="ds",
        document_id=document,
        document_name=document,
    )


class Recorder:
    """An Emit that keeps every progress event."""

    def __init__(self) -> None:
        self.events: list[Progress] = []

    async def __call__(self, event: Progress) -> None:
        self.events.append(event)

    @property
    def retrieving(self) -> list[tuple[int, str]]:
        return [(e.round, e.query) for e in self.events if isinstance(e, Retrieving)]

    @property
    def assessed(self) -> list[tuple[int, bool, str]]:
        return [(e.round, e.sufficient, e.missing) for e in self.events if isinstance(e, Assessed)]


class CountingReranker:
    """A reranker that counts its calls and delegates to the local reranker."""

    name = "counting"

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []
        self._inner = LocalReranker()

    async def rerank(self, question: str, hits: Sequence[Hit]) -> list[Hit]:
        self.calls.append((question, [h.id for h in hits]))
        return await self._inner.rerank(question, hits)


class FailingReranker:
    """A reranker whose service is down."""

    name = "http"

    async def rerank(self, question: str, hits: Sequence[Hit]) -> list[Hit]:
        raise ModelUnavailable("rerank service down")


def build(
    kb: FakeKnowledgeBase | None = None,
    engine: FakeEngine | None = None,
    *,
    reranker: Any = None,
    classifier: Any = None,
    **limits: Any,
) -> tuple[IterativeRetriever, FakeKnowledgeBase, FakeEngine, CountingReranker | Any]:
    """An IterativeRetriever over fakes (a counting reranker unless one is given)."""
    kb = kb or FakeKnowledgeBase()
    engine = engine or FakeEngine()
    reranker = reranker or CountingReranker()
    retriever = IterativeRetriever(
        kb=kb, engine=engine, reranker=reranker, classifier=classifier, limits=LoopLimits(**limits)
    )
    return retriever, kb, engine, reranker
