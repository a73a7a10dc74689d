"""Batching boundaries: per-turn clipping, batch limits, oversized turns, and rolling the summary per batch."""

from __future__ import annotations

from core.budget import count_tokens
from core.conversation.compaction import CompactingContextLoader
from core.conversation.compaction_batches import (
    BatchLimits,
    clip_turn,
    recent_window_budget,
    summary_room,
    take_batch,
    trim_recent,
    turn_tokens,
    turns_tokens,
)
from core.errors import ModelUnavailable
from core.messages import CORE
from core.models import Turn
from tests.compaction.conftest import CONVERSATION, ProgressCounter, add_turns, chinese
from tests.fakes import FakeEngine, InMemoryConversationStore


def _turn(record_id: int, question_chars: int, answer_chars: int) -> Turn:
    return Turn(record_id, chinese(question_chars), chinese(answer_chars, offset=2))


def test_question_and_answer_are_clipped_to_their_own_limits_with_the_marker() -> None:
    """A long question is cut to 2000 tokens and a long answer to 3500, each with the truncation marker."""
    turn = _turn(1, 3000, 5000)

    clipped = clip_turn(turn, BatchLimits())

    assert count_tokens(clipped.question) <= 2000 < count_tokens(turn.question)
    assert count_tokens(clipped.answer) <= 3500 < count_tokens(turn.answer)
    assert clipped.question.endswith(CORE.text("budget.truncated", "zh"))
    assert clipped.answer.endswith(CORE.text("budget.truncated", "zh"))
    assert clipped.record_id == 1
    short = _turn(2, 10, 10)
    assert clip_turn(short, BatchLimits()) is short


def test_a_batch_stops_before_the_turn_that_would_overflow_it() -> None:
    """Turns are taken in order while their sum stays within batch_tokens; the next turn starts a new batch."""
    page = [_turn(i, 20, 400) for i in range(1, 6)]
    size = turn_tokens(page[0])
    limits = BatchLimits(batch_tokens=size * 2 + size // 2)

    batch = take_batch(page, limits)

    assert [t.record_id for t in batch] == [1, 2]
    assert turns_tokens(batch) <= limits.batch_tokens
    assert [t.record_id for t in take_batch(page[2:], limits)] == [3, 4]


def test_an_oversized_single_turn_forms_its_own_batch() -> None:
    """A turn bigger than the batch limit is neither skipped nor merged: it is summarised alone, clipped."""
    small, huge, after = _turn(1, 20, 100), _turn(2, 2500, 6000), _turn(3, 20, 100)
    limits = BatchLimits(question_tokens=2000, answer_tokens=3500, batch_tokens=1000)

    first = take_batch([small, huge, after], limits)
    second = take_batch([huge, after], limits)

    assert [t.record_id for t in first] == [1]
    assert [t.record_id for t in second] == [2]
    assert turn_tokens(second[0]) <= 5500
    assert second[0].answer.endswith(CORE.text("budget.truncated", "zh"))


def test_recent_window_keeps_the_latest_turn_and_reserves_room_for_the_summary() -> None:
    """The window is max(128, budget - 1800), trimmed from the front, never below one turn."""
    assert recent_window_budget(6000, 1800) == 4200
    assert recent_window_budget(512, 1800) == 128
    assert summary_room(6000, 1800) == 1800
    assert summary_room(512, 1800) == 384  # the summary never pushes a small budget over
    turns = [_turn(i, 20, 300) for i in range(1, 6)]
    window = turn_tokens(turns[0]) * 2 + 5

    assert [t.record_id for t in trim_recent(turns, window)] == [4, 5]
    assert [t.record_id for t in trim_recent(turns, 1)] == [5]
    assert trim_recent([], 100) == []


async def test_several_batches_roll_the_summary_and_advance_the_watermark_per_batch(
    store: InMemoryConversationStore, engine: FakeEngine
) -> None:
    """Each batch merges into the previous summary; the watermark reaches the window's start at the end."""
    records = await add_turns(store, 12)
    engine.summaries.extend(["摘要一", "摘要二", "摘要三", "摘要四", "摘要五", "摘要六"])
    size = turn_tokens(Turn(records[0].id, records[0].question, records[0].answer or ""))
    loader = CompactingContextLoader(
        store=store, engine=engine, recent_tokens=2500, batch_limits=BatchLimits(batch_tokens=size * 3)
    )

    context = await loader.load(CONVERSATION, before_id=10**9, on_compacting=ProgressCounter())

    calls = engine.calls("summarise")
    assert [previous for previous, _, _ in calls] == ["", "摘要一", "摘要二", "摘要三"][: len(calls)]
    batches = [[t.record_id for t in turns] for _, turns, _ in calls]
    assert all(len(batch) <= 3 for batch in batches)
    summarised = [record_id for batch in batches for record_id in batch]
    recent_ids = [t.record_id for t in context.turns]
    assert summarised + recent_ids == [r.id for r in records]
    snapshot = await store.read_context(CONVERSATION)
    assert snapshot.revision == len(calls)
    assert snapshot.through_record_id == summarised[-1]
    assert snapshot.compacted_rounds == len(summarised)
    assert context.metadata.summary_calls == len(calls)
    assert all(max_tokens == 1800 for _, _, max_tokens in calls)


async def test_a_failure_in_a_later_batch_keeps_the_watermark_of_the_last_saved_batch(
    store: InMemoryConversationStore, engine: FakeEngine
) -> None:
    """Batch one is saved, batch two fails: the watermark stops at batch one's last turn, revision 1."""
    records = await add_turns(store, 12)
    engine.summaries.extend(["摘要一", ModelUnavailable("down")])
    size = turn_tokens(Turn(records[0].id, records[0].question, records[0].answer or ""))
    loader = CompactingContextLoader(
        store=store, engine=engine, recent_tokens=2500, batch_limits=BatchLimits(batch_tokens=size * 3)
    )

    context = await loader.load(CONVERSATION, before_id=10**9, on_compacting=ProgressCounter())

    snapshot = await store.read_context(CONVERSATION)
    assert snapshot.through_record_id == records[2].id
    assert snapshot.compacted_rounds == 3
    assert snapshot.revision == 1
    assert snapshot.summary == "摘要一"
    assert context.metadata.compacted is True
    assert context.metadata.compaction_error == "model_unavailable"
    assert context.metadata.summary_calls == 2
    assert context.messages[0].content.endswith("\n摘要一\n</summary>")
