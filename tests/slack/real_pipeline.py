"""core.pipeline.Pipeline built from the project's fakes, the way bot/compose.py builds it from adapters."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from core.conversation.compaction import CompactingContextLoader, compact_conversation
from core.conversation.locks import LocalConversationLock
from core.pipeline import Pipeline
from core.ports import ConversationLock, ConversationStore, LeftOutParts
from core.retrieval.iterative import IterativeRetriever
from tests.fakes import FakeEngine, FakeKnowledgeBase, InMemoryConversationStore


@dataclass
class RealPipeline:
    """The real pipeline and the fakes behind it."""

    pipeline: Pipeline
    store: ConversationStore
    kb: FakeKnowledgeBase
    engine: FakeEngine


def build_real_pipeline(
    store: ConversationStore | None = None,
    lock: ConversationLock | None = None,
    left_out: LeftOutParts | None = None,
) -> RealPipeline:
    """Pipeline + compacting context loader + routed retriever + manual compaction, over in-memory fakes
    (or over a given store and lock, e.g. PostgreSQL shared by several bot instances); left_out quotes the
    parts the answer left out when given (the composition root gives the extractive engine)."""
    store = store or InMemoryConversationStore()
    kb = FakeKnowledgeBase()
    kb.add(
        "p1",
        "Deploys run with make deploy from the main branch.",
        document="Ops guide",
        dataset="docs",
        heading="Deploying",
    )
    kb.add(
        "p2",
        "Rollbacks use make rollback and take five minutes.",
        document="Ops guide",
        dataset="docs",
        heading="Rollback",
    )
    kb.add(
        "p3",
        "行政复议申请期限为六十日,自知道该行政行为之日起计算。",
        document="行政复议法",
        dataset="docs",
        heading="第二十条",
    )
    engine = FakeEngine()
    lock = lock or LocalConversationLock()
    loader = CompactingContextLoader(store=store, engine=engine)
    pipeline = Pipeline(
        records=store,
        lock=lock,
        context_loader=loader,
        retriever=IterativeRetriever(kb=kb, engine=engine),
        engine=engine,
        compactor=functools.partial(compact_conversation, loader=loader, lock=lock),
        orphan_grace=0.5,
        left_out=left_out,
    )
    return RealPipeline(pipeline, store, kb, engine)
