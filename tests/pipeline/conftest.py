"""Builds a Pipeline from fakes, the way bot/compose.py builds it from real adapters."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from core.commands import Ask, AskAgain
from core.conversation.history import BoundedHistoryLoader
from core.conversation.locks import LocalConversationLock
from core.events import Progress
from core.models import ConversationKey, ConversationScope, SearchMode
from core.pipeline import Pipeline, PipelineLimits
from core.ports import SentenceMeaning
from core.retrieval.iterative import IterativeRetriever
from core.retrieval.single_search import SingleSearchRetriever
from tests.fakes import FakeEngine, FakeKnowledgeBase, InMemoryConversationStore

KEY = ConversationKey(source="test", channel_id="C1", thread_ts="1")


@dataclass
class Harness:
    """The pipeline and the fakes behind it."""

    pipeline: Pipeline
    store: InMemoryConversationStore
    kb: FakeKnowledgeBase
    engine: FakeEngine
    lock: LocalConversationLock

    async def ask(
        self, text: str, *, again: int | None = None, search_mode: SearchMode | None = None, **fields: object
    ) -> list[Progress]:
        """Every event of one question (a new Ask, or AskAgain of record `again`) in KEY's conversation."""
        scope = ConversationScope(("ds",), search_mode=search_mode)
        command = (
            Ask(KEY, text, scope, **fields)  # type: ignore[arg-type]
            if again is None
            else AskAgain(KEY, again, scope)
        )
        return [event async for event in self.pipeline.ask(command)]


def build_harness(
    *,
    dialogue_number: int = 5,
    fallback: FakeEngine | None = None,
    meaning: SentenceMeaning | None = None,
    **limits: object,
) -> Harness:
    """A pipeline over fakes with a bounded history loader and a single-search retriever."""
    store = InMemoryConversationStore()
    kb = FakeKnowledgeBase()
    engine = FakeEngine()
    lock = LocalConversationLock()
    pipeline = Pipeline(
        records=store,
        lock=lock,
        context_loader=BoundedHistoryLoader(store, dialogue_number=dialogue_number),
        retriever=SingleSearchRetriever(kb),
        engine=engine,
        fallback_engine=fallback,
        limits=PipelineLimits(**limits),  # type: ignore[arg-type]
        meaning=meaning,
    )
    return Harness(pipeline, store, kb, engine, lock)


def looped_pipeline(
    store: InMemoryConversationStore, kb: FakeKnowledgeBase, engine: FakeEngine, **limits: object
) -> Pipeline:
    """A pipeline over fakes whose retriever is the multi-hop loop (IterativeRetriever) on the same engine."""
    return Pipeline(
        records=store,
        lock=LocalConversationLock(),
        context_loader=BoundedHistoryLoader(store, dialogue_number=5),
        retriever=IterativeRetriever(kb=kb, engine=engine),
        engine=engine,
        limits=PipelineLimits(**limits),  # type: ignore[arg-type]
    )


@pytest.fixture
def harness() -> Harness:
    """A fresh pipeline over fakes."""
    return build_harness()
