"""The loader inside the real Pipeline: one compacting event, context stats in the record, manual compaction."""

from __future__ import annotations

import functools

from core.commands import Ask
from core.conversation.compaction import CompactingContextLoader, compact_conversation
from core.conversation.locks import LocalConversationLock
from core.events import Compacting, Done
from core.models import ConversationKey, ConversationScope
from core.pipeline import Pipeline
from core.retrieval.single_search import SingleSearchRetriever
from tests.compaction.conftest import chinese
from tests.fakes import FakeEngine, FakeKnowledgeBase, InMemoryConversationStore

KEY = ConversationKey(source="test", channel_id="C1", thread_ts="1")
CONTEXT_KEYS = {
    "enabled",
    "compacted",
    "revision",
    "compacted_rounds",
    "through_record_id",
    "recent_rounds",
    "token_budget",
    "threshold_exceeded",
    "compaction_reason",
    "estimated_tokens",
}


def _pipeline() -> tuple[Pipeline, InMemoryConversationStore, FakeEngine]:
    store, engine, lock = InMemoryConversationStore(), FakeEngine(), LocalConversationLock()
    kb = FakeKnowledgeBase()
    kb.add("p1", "行政复议申请期限为六十日。", document="行政复议法")
    loader = CompactingContextLoader(store=store, engine=engine, recent_tokens=1500)
    pipeline = Pipeline(
        records=store,
        lock=lock,
        context_loader=loader,
        retriever=SingleSearchRetriever(kb),
        engine=engine,
        compactor=functools.partial(compact_conversation, loader=loader, lock=lock),
    )
    return pipeline, store, engine


async def test_the_compacting_event_fires_once_and_only_on_the_question_that_compacts() -> None:
    """Questions under budget show no compacting phase; the one that crosses it shows exactly one."""
    pipeline, store, engine = _pipeline()
    compacting_per_question = []
    for index in range(8):
        engine.answers.append([f"第{index + 1}个回答:" + chinese(300, offset=index)])
        question = Ask(KEY, f"行政复议第{index + 1}问", ConversationScope(("ds",)))
        events = [event async for event in pipeline.ask(question)]
        assert isinstance(events[-1], Done)
        compacting_per_question.append(sum(isinstance(e, Compacting) for e in events))

    assert compacting_per_question[:3] == [0, 0, 0]  # short history: no summary, no event
    assert max(compacting_per_question) == 1
    records = await store.list_records(KEY.as_id())
    contexts = [record.details.context for record in records]
    assert all(context is not None and set(context.to_json()) >= CONTEXT_KEYS for context in contexts)
    calls = [context.summary_calls if context else 0 for context in contexts]
    assert [n > 0 for n in calls] == [n == 1 for n in compacting_per_question]
    assert sum(calls) == len(engine.calls("summarise"))


async def test_manual_compaction_through_the_pipeline_uses_the_same_threshold() -> None:
    """pipeline.compact() declines a short conversation without a model call."""
    pipeline, _, engine = _pipeline()
    engine.answers.append(["简短回答"])
    [_ async for _ in pipeline.ask(Ask(KEY, "行政复议期限?", ConversationScope(("ds",))))]

    report = await pipeline.compact(KEY.as_id())

    assert (report.compacted, report.reason, report.summary_calls) == (False, "under_budget", 0)
    assert engine.calls("summarise") == []
