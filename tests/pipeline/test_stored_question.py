"""A question the front end stored before anything else (Question.record_id): answered, failed or skipped."""

from __future__ import annotations

from core.events import Done, Failed
from core.models import Delivery, RecordStatus
from tests.pipeline.conftest import KEY, Harness


async def _stored(harness: Harness, text: str) -> int:
    conversation = await harness.store.ensure_conversation(KEY)
    record, _ = await harness.store.add_question(
        conversation, text, event_key=f"slack:{text}", delivery=Delivery()
    )
    return record.id


async def test_a_stored_question_is_answered_in_its_own_record(harness: Harness) -> None:
    """The pipeline answers the given record instead of storing a second one, keeping its delivery."""
    harness.kb.add("p1", "年假一般为 5 天", document="休假制度")
    record_id = await _stored(harness, "年假有几天?")
    events = await harness.ask("年假有几天?", record_id=record_id)
    done = events[-1]
    assert isinstance(done, Done) and done.record.id == record_id
    assert done.record.status == RecordStatus.ANSWERED and done.record.delivery == Delivery()
    assert len(harness.store.records) == 1


async def test_a_stored_question_that_fails_validation_is_marked_failed_not_left_pending(
    harness: Harness,
) -> None:
    """A blank stored question ends as a failed record (with the reason), never as a pending one."""
    record_id = await _stored(harness, "   ")
    events = await harness.ask("   ", record_id=record_id)
    failed = events[-1]
    assert isinstance(failed, Failed) and failed.code == "invalid_input"
    assert failed.record is not None and failed.record.id == record_id
    assert harness.store.records[record_id].status == RecordStatus.FAILED
    assert harness.store.records[record_id].details["failure"].startswith("invalid_input")


async def test_a_stored_question_already_finished_is_not_answered_again(harness: Harness) -> None:
    """A record interrupted before its answer started is reported as a duplicate and left as it is."""
    record_id = await _stored(harness, "年假有几天?")
    await harness.store.fail_record(record_id, status=RecordStatus.INTERRUPTED, reason="swept")
    events = await harness.ask("年假有几天?", record_id=record_id)
    assert [type(e) for e in events] == [Failed] and events[0].code == "duplicate"  # type: ignore[attr-defined]
    assert harness.store.records[record_id].status == RecordStatus.INTERRUPTED
    assert harness.engine.calls("answer") == []
