"""The compaction behaviours, one test each, against in-memory fakes of the ports.

See docs/design.md#compaction-behaviours-under-test.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from core.conversation.compaction import CompactingContextLoader, compact_conversation
from core.conversation.compaction_batches import BatchLimits
from core.conversation.compaction_messages import messages_tokens
from core.conversation.locks import LocalConversationLock
from core.errors import ModelTruncated, ModelUnavailable
from core.messages import CORE
from core.models import ContextSnapshot, Message, Turn, Usage
from tests.compaction.conftest import (
    CONVERSATION,
    ProgressCounter,
    add_turns,
    as_turn,
    chinese,
    tokens_of,
)
from tests.fakes import FakeEngine, InMemoryConversationStore
from tests.stored import stored_question

END = 10**9  # before_id past every record


def loader_for(
    store: InMemoryConversationStore, engine: FakeEngine, *, budget: int = 2500, keep: int = 5
) -> CompactingContextLoader:
    """A loader with a small budget so a dozen turns are enough to compact."""
    return CompactingContextLoader(store=store, engine=engine, dialogue_number=keep, recent_tokens=budget)


async def test_compacted_memory_and_recent_original_messages_are_both_carried_forward(
    store: InMemoryConversationStore, engine: FakeEngine
) -> None:
    """Over budget, the model gets the summary first and then the latest turns verbatim; no record is lost."""
    records = await add_turns(store, 12)
    before = dict(store.records)
    engine.summaries.append("用户询问了行政复议的期限与代理人规则。")
    progress = ProgressCounter()

    context = await loader_for(store, engine).load(CONVERSATION, before_id=END, on_compacting=progress)

    summary_message, *pairs = context.messages
    assert summary_message.role == "user"
    assert summary_message.content.startswith(
        CORE.text("compaction.summary_label", "zh") + "\n<summary>\n用户询问了行政复议的期限与代理人规则。"
    )
    recent = [as_turn(r) for r in records[-len(pairs) // 2 :]]
    assert len(recent) >= 1
    assert pairs == [m for t in recent for m in (Message("user", t.question), Message("assistant", t.answer))]
    snapshot = await store.read_context(CONVERSATION)
    assert snapshot.through_record_id == records[-len(recent) - 1].id
    assert snapshot.compacted_rounds == len(records) - len(recent)
    assert snapshot.revision == 1
    assert store.records == before  # originals neither deleted nor edited
    summarised = engine.calls("summarise")[0][1]
    assert [t.record_id for t in summarised] == [r.id for r in records[: -len(recent)]]
    assert context.metadata.compacted is True
    assert context.metadata.compaction_reason == "token_budget_exceeded"
    assert context.usage == Usage(30, 15)
    assert progress.calls == 1


async def test_reload_does_not_summarise_the_same_rows_twice(
    store: InMemoryConversationStore, engine: FakeEngine
) -> None:
    """A second load of the same question reads the stored summary: no model call, revision unchanged."""
    await add_turns(store, 12)
    loader = loader_for(store, engine)
    first = await loader.load(CONVERSATION, before_id=END, on_compacting=ProgressCounter())
    progress = ProgressCounter()

    second = await loader.load(CONVERSATION, before_id=END, on_compacting=progress)

    assert len(engine.calls("summarise")) == 1
    assert (await store.read_context(CONVERSATION)).revision == 1
    assert second.messages == first.messages
    assert second.metadata.compacted is False
    assert second.metadata.threshold_exceeded is False
    assert second.metadata.revision == 1
    assert progress.calls == 0


@pytest.mark.parametrize(
    "failure",
    [ModelUnavailable("timeout"), ModelTruncated("length"), ""],
    ids=["error", "truncated", "empty"],
)
async def test_failed_summary_does_not_advance_the_watermark(
    store: InMemoryConversationStore, engine: FakeEngine, failure: Exception | str
) -> None:
    """A failed, truncated or empty summary leaves watermark and revision at 0, yet history is still sent."""
    records = await add_turns(store, 12)
    engine.summaries.append(failure)
    loader = loader_for(store, engine)

    context = await loader.load(CONVERSATION, before_id=END, on_compacting=ProgressCounter())

    assert await store.read_context(CONVERSATION) == ContextSnapshot()
    expected_code = "model_output_invalid" if failure == "" else getattr(failure, "code", "")
    assert context.metadata.compaction_error == expected_code
    assert context.metadata.compaction_reason == "failed"
    assert context.metadata.compacted is False
    assert context.metadata.through_record_id == 0
    assert context.messages[0].content == records[-len(context.messages) // 2].question  # raw, no summary
    assert messages_tokens(context.messages) <= loader.budget
    retry = await loader.load(CONVERSATION, before_id=END, on_compacting=ProgressCounter())
    assert retry.metadata.compacted is True
    assert engine.calls("summarise")[-1][1][0].record_id == records[0].id  # nothing was skipped


async def test_current_and_future_records_never_leak_into_context(
    store: InMemoryConversationStore, engine: FakeEngine
) -> None:
    """Only answered turns before the current record are read; later or pending ones never trigger a summary."""
    earlier = await add_turns(store, 3)
    current = await stored_question(store, CONVERSATION, "当前问题")
    await add_turns(store, 10, answer_chars=1500)  # far over budget, but after the current question
    pending = await stored_question(store, CONVERSATION, "另一个还在生成的问题")
    assert pending.id > current.id

    context = await loader_for(store, engine).load(
        CONVERSATION, before_id=current.id, on_compacting=ProgressCounter()
    )

    assert [t.record_id for t in context.turns] == [r.id for r in earlier]
    assert "当前问题" not in {m.content for m in context.messages}
    assert engine.calls("summarise") == []
    assert context.metadata.threshold_exceeded is False


async def test_disabling_history_also_disables_an_existing_summary(
    store: InMemoryConversationStore, engine: FakeEngine
) -> None:
    """dialogue_number 0 returns no messages at all, not even the stored summary, and reads no turns."""
    await add_turns(store, 12)
    await store.save_context(
        CONVERSATION, expected_revision=0, snapshot=ContextSnapshot("旧摘要:预算 3870 万元", 5, 5, 1)
    )

    context = await loader_for(store, engine, keep=0).load(
        CONVERSATION, before_id=END, on_compacting=ProgressCounter()
    )

    assert context.messages == ()
    assert context.turns == ()
    assert context.metadata.enabled is False
    assert context.summary == ""
    assert store.turn_queries == []
    assert engine.calls("summarise") == []


async def test_thirty_short_turns_never_compact_even_when_asked_manually(
    store: InMemoryConversationStore, engine: FakeEngine
) -> None:
    """Turn count alone never triggers: thirty short turns are all sent verbatim, and manual compaction declines."""
    records = await add_turns(store, 30, question_chars=10, answer_chars=40)
    assert tokens_of(records) < 6000
    loader = CompactingContextLoader(store=store, engine=engine)  # defaults: 5 turns, 6000 tokens

    context = await loader.load(CONVERSATION, before_id=END, on_compacting=ProgressCounter())
    report = await compact_conversation(CONVERSATION, loader=loader, lock=LocalConversationLock())

    assert [t.record_id for t in context.turns] == [r.id for r in records]
    assert len(context.messages) == 60
    assert report.compacted is False
    assert report.reason == "under_budget"
    assert report.summary_calls == 0
    assert engine.calls("summarise") == []
    assert await store.read_context(CONVERSATION) == ContextSnapshot()


async def test_exact_threshold_does_not_compact_and_one_token_over_does(
    store: InMemoryConversationStore, engine: FakeEngine
) -> None:
    """An estimate equal to the budget keeps the raw history; one token less budget compacts, with one progress event."""
    records = await add_turns(store, 10)
    total = tokens_of(records)
    at_budget = ProgressCounter()

    same = await loader_for(store, engine, budget=total).load(
        CONVERSATION, before_id=END, on_compacting=at_budget
    )

    assert same.metadata.threshold_exceeded is False
    assert len(same.turns) == 10
    assert engine.calls("summarise") == []
    assert at_budget.calls == 0

    over = ProgressCounter()
    loader = CompactingContextLoader(
        store=store, engine=engine, recent_tokens=total - 1, batch_limits=BatchLimits(batch_tokens=600)
    )
    compacted = await loader.load(CONVERSATION, before_id=END, on_compacting=over)

    assert compacted.metadata.threshold_exceeded is True
    assert compacted.metadata.compacted is True
    assert len(engine.calls("summarise")) > 1  # several batches ...
    assert over.calls == 1  # ... but one progress event


async def test_long_single_turn_does_not_pretend_to_compact_without_older_history(
    store: InMemoryConversationStore, engine: FakeEngine
) -> None:
    """One turn larger than the budget is clipped with the marker; no summary call, no progress event."""
    question = "请总结这份材料:" + chinese(300)
    record = await store.answered(CONVERSATION, question, chinese(9000))
    progress = ProgressCounter()
    loader = CompactingContextLoader(store=store, engine=engine)

    context = await loader.load(CONVERSATION, before_id=END, on_compacting=progress)
    report = await compact_conversation(CONVERSATION, loader=loader, lock=LocalConversationLock())

    assert context.metadata.threshold_exceeded is True
    assert context.metadata.compacted is False
    assert context.metadata.compaction_reason == "no_older_turns"
    assert [m.role for m in context.messages] == ["user", "assistant"]
    assert context.messages[0].content == question  # the short part stays whole
    assert context.messages[1].content.endswith(CORE.text("budget.truncated", "zh"))
    assert messages_tokens(context.messages) <= loader.budget
    assert context.turns == (Turn(record.id, question, context.messages[1].content),)
    assert engine.calls("summarise") == []
    assert progress.calls == 0
    assert report.compacted is False and report.summary_calls == 0
    assert store.records[record.id].answer == chinese(9000)


class _LoggingEngine(FakeEngine):
    """A FakeEngine that logs when a summary call starts, to observe interleaving."""

    def __init__(self, log: list[str]) -> None:
        super().__init__()
        self.log = log

    async def summarise(self, previous: str, turns: Sequence[Turn], *, max_tokens: int) -> tuple[str, Usage]:
        self.log.append("summarise")
        await asyncio.sleep(0)
        return await super().summarise(previous, turns, max_tokens=max_tokens)


async def test_same_conversation_cannot_generate_and_compact_concurrently(
    store: InMemoryConversationStore,
) -> None:
    """Manual compaction waits for a generation holding the lock, and two compactions never both summarise."""
    await add_turns(store, 12)
    log: list[str] = []
    engine = _LoggingEngine(log)
    loader = loader_for(store, engine)
    lock = LocalConversationLock()
    release = asyncio.Event()

    async def generation() -> None:
        async with lock.hold(CONVERSATION):
            log.append("generation starts")
            await release.wait()
            log.append("generation ends")

    generating = asyncio.create_task(generation())
    await asyncio.sleep(0)
    first = asyncio.create_task(compact_conversation(CONVERSATION, loader=loader, lock=lock))
    second = asyncio.create_task(compact_conversation(CONVERSATION, loader=loader, lock=lock))
    for _ in range(5):
        await asyncio.sleep(0)
    assert log == ["generation starts"]
    assert lock.waiting(CONVERSATION) == 3

    release.set()
    reports = await asyncio.gather(generating, first, second)

    assert log == ["generation starts", "generation ends", "summarise"]
    assert reports[1] is not None and reports[1].compacted is True
    assert reports[2] is not None and reports[2].compacted is False
    assert reports[2].reason == "under_budget"
    assert (await store.read_context(CONVERSATION)).revision == 1


async def test_re_asking_a_question_behind_the_watermark_never_leaks_later_turns(
    store: InMemoryConversationStore, engine: FakeEngine
) -> None:
    """When the summary covers turns after the re-asked question, it is left out and only earlier turns are sent."""
    records = await add_turns(store, 12)
    loader = loader_for(store, engine)
    await loader.load(CONVERSATION, before_id=END, on_compacting=ProgressCounter())
    through = (await store.read_context(CONVERSATION)).through_record_id
    re_asked = records[3]
    assert through > re_asked.id

    context = await loader.load(CONVERSATION, before_id=re_asked.id, on_compacting=ProgressCounter())

    assert [t.record_id for t in context.turns] == [r.id for r in records[:3]]
    assert all(
        not m.content.startswith(CORE.text("compaction.summary_label", "zh")) for m in context.messages
    )
    assert context.metadata.compaction_reason == "summary_covers_later_turns"
    assert context.summary == ""
    assert len(engine.calls("summarise")) == 1
    assert (await store.read_context(CONVERSATION)).through_record_id == through
