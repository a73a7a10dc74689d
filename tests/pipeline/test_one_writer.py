"""The pipeline as the only writer of records: commands in, the stored record announced, every end recorded."""

from __future__ import annotations

import asyncio

from core.commands import Ask, AskAgain, GiveFeedback
from core.events import Accepted, ContextLoading, Done, Failed, Queued
from core.models import ConversationScope, RecordStatus
from tests.pipeline.conftest import KEY, Harness
from tests.stored import stored_question

SCOPE = ConversationScope(("ds",), search_mode="keywords")


async def test_the_stored_record_is_announced_before_any_other_event(harness: Harness) -> None:
    """Accepted carries the pending record, stored with who asked and where the answer goes, first of all."""
    harness.kb.add("p1", "年假一般为 5 天", document="休假制度")
    command = Ask(KEY, "年假有几天?", SCOPE, event_key="m:1", asked_by="slack:T:U", reply_to="C1:1.0")
    events = [event async for event in harness.pipeline.ask(command)]
    accepted = events[0]
    assert isinstance(accepted, Accepted) and isinstance(events[1], ContextLoading)
    assert accepted.record.status == RecordStatus.PENDING
    assert (accepted.record.asked_by, accepted.record.reply_to) == ("slack:T:U", "C1:1.0")
    done = events[-1]
    assert isinstance(done, Done) and done.record.id == accepted.record.id
    assert harness.store.deliveries[accepted.record.id].due > 0  # a front end will deliver it


async def test_the_first_question_stores_the_conversation_and_its_scope(harness: Harness) -> None:
    """The conversation and the scope of its first question are stored with the record; later scopes do not win."""
    await harness.pipeline.answer(Ask(KEY, "年假有几天?", SCOPE))
    await harness.pipeline.answer(Ask(KEY, "病假呢?", ConversationScope(("other",))))
    assert await harness.store.find_conversation(KEY) == KEY.as_id()
    assert await harness.store.read_scope(KEY.as_id()) == SCOPE


async def test_bad_input_stores_nothing(harness: Harness) -> None:
    """A blank question fails in both languages before any conversation or record exists."""
    events = [event async for event in harness.pipeline.ask(Ask(KEY, "   ", SCOPE))]
    assert len(events) == 1 and isinstance(events[0], Failed) and events[0].record is None
    assert " / " in events[0].message
    assert harness.store.records == {} and harness.store.conversations == {}


async def test_a_duplicate_names_the_record_it_duplicates(harness: Harness) -> None:
    """A second Ask with a used event key ends at once with code duplicate and the stored record."""
    first = await harness.pipeline.answer(Ask(KEY, "年假有几天?", SCOPE, event_key="m:1"))
    events = [event async for event in harness.pipeline.ask(Ask(KEY, "年假有几天?", SCOPE, event_key="m:1"))]
    assert [type(event) for event in events] == [Failed]
    failed = events[0]
    assert isinstance(failed, Failed) and failed.code == "duplicate"
    assert failed.record is not None and failed.record.id == first.id  # type: ignore[union-attr]


async def test_asking_again_answers_an_interrupted_record_in_place(harness: Harness) -> None:
    """AskAgain answers the stored question in the same record, keeping the interrupted attempt."""
    harness.kb.add("p1", "年假一般为 5 天", document="休假制度")
    record = await stored_question(harness.store, KEY.as_id(), "年假有几天?")
    await harness.store.fail_record(record.id, status=RecordStatus.INTERRUPTED, reason="swept")
    final = await harness.pipeline.answer(AskAgain(KEY, record.id, SCOPE))
    assert not isinstance(final, Failed) and final.id == record.id
    assert final.status == RecordStatus.ANSWERED
    assert [a.status for a in final.details.previous_answers] == ["interrupted"]
    assert len(harness.store.records) == 1


async def test_a_question_given_up_while_queued_is_interrupted_not_left_pending(harness: Harness) -> None:
    """Closing the stream of a question waiting behind another marks its record interrupted at once."""
    async with harness.lock.hold(KEY.as_id()):
        stream = harness.pipeline.ask(Ask(KEY, "排队的问题?", SCOPE))
        seen = [await anext(stream), await anext(stream)]
        assert [type(event) for event in seen] == [Accepted, Queued]
        await stream.aclose()
    record = seen[0].record  # type: ignore[union-attr]
    await asyncio.sleep(0)
    assert harness.store.records[record.id].status == RecordStatus.INTERRUPTED


async def test_a_failure_keeps_what_the_user_was_told(harness: Harness) -> None:
    """A failed question's record holds the message shown, so a re-delivery shows the same words."""
    events = [event async for event in harness.pipeline.ask(Ask(KEY, "年假?", ConversationScope(())))]
    failed = events[-1]
    assert isinstance(failed, Failed) and failed.record is not None
    assert failed.record.details.user_message == failed.message


async def test_feedback_is_kept_per_person(harness: Harness) -> None:
    """Each person's latest verdict is kept on the record; an unknown record gives None."""
    record = await harness.pipeline.answer(Ask(KEY, "年假有几天?", SCOPE))
    assert not isinstance(record, Failed)
    await harness.pipeline.feedback(GiveFeedback(record.id, "slack:T:U1", "down"))
    await harness.pipeline.feedback(GiveFeedback(record.id, "slack:T:U1", "up"))
    updated = await harness.pipeline.feedback(GiveFeedback(record.id, "slack:T:U2", "down"))
    assert updated is not None
    assert {item.person: item.value for item in updated.details.feedback} == {
        "slack:T:U1": "up",
        "slack:T:U2": "down",
    }
    assert await harness.pipeline.feedback(GiveFeedback(999, "slack:T:U1", "up")) is None
