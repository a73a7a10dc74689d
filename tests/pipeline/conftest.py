"""Builds a Pipeline from fakes, the way bot/compose.py builds it from real adapters."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from core.conversation.history import BoundedHistoryLoader
from core.conversation.locks import LocalConversationLock
from core.events import Progress
from core.models import ConversationKey, Question
from core.pipeline import Pipeline, PipelineLimits
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

    async def ask(self, text: str, **kwargs: object) -> list[Progress]:
        question = Question(conversation=KEY, text=text, datasets=("ds",), **kwargs)  # type: ignore[arg-type]
        return [event async for event in self.pipeline.ask(question)]


def build_harness(
    *, dialogue_number: int = 5, fallback: FakeEngine | None = None, **limits: object
) -> Harness:
    """A pipeline over fakes with a bounded history loader and a single-search retriever."""
    store = InMemoryConversationStore()
    kb = FakeKnowledgeBase()
    engine = FakeEngine()
    lock = LocalConversationLock()
    pipeline = Pipeline(
        store=store,
        lock=lock,
        context_loader=BoundedHistoryLoader(store, dialogue_number=dialogue_number),
        retriever=SingleSearchRetriever(kb),
        engine=engine,
        fallback_engine=fallback,
        limits=PipelineLimits(**limits),  # type: ignore[arg-type]
    )
    return Harness(pipeline, store, kb, engine, lock)


@pytest.fixture
def harness() -> Harness:
    """A fresh pipeline over fakes."""
    return build_harness()
