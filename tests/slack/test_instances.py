"""Two bot instances (two real AsyncApps) sharing one PostgreSQL database and one Slack workspace:
duplicates across instances, thread engagement, and recovery from an instance that died mid-answer."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import Any

import pytest

from adapters.slack.delivery.ledger import Delivery, DeliveryState
from adapters.store.backends import PostgresConversationStore
from adapters.store.pg_lock import PostgresConversationLock
from core.models import RecordStatus
from core.record import Record
from tests.adapters.postgres_support import POSTGRES_URL, isolated_schema
from tests.slack.harness import FAST, SlackHarness
from tests.slack.mock_slack_api import MockSlackApi
from tests.slack.real_pipeline import RealPipeline, build_real_pipeline

SETTLE = 60.0  # seconds a poll may wait for the survivor: generous, as the full suite loads both cores


@dataclass
class Instance:
    """One running bot: its harness, pipeline, store and lock (its own connections to the shared database)."""

    harness: SlackHarness
    parts: RealPipeline
    store: PostgresConversationStore
    lock: PostgresConversationLock
    dead: bool = False


class Cluster:
    """Instances started on one schema against one mock workspace."""

    def __init__(self, schema: str, mock: MockSlackApi) -> None:
        self.schema = schema
        self.mock = mock
        self.instances: list[Instance] = []

    async def start(self, **options: Any) -> Instance:
        settings = {"search_path": self.schema}
        store = await PostgresConversationStore.open(POSTGRES_URL, server_settings=settings)
        lock = await PostgresConversationLock.connect(
            POSTGRES_URL, namespace=self.schema, server_settings=settings
        )
        parts = build_real_pipeline(store, lock)
        harness = await SlackHarness(
            pipeline=parts.pipeline, store=parts.store, mock=self.mock, options=replace(FAST, **options)
        ).start()
        instance = Instance(harness, parts, store, lock)
        self.instances.append(instance)
        return instance

    async def kill(self, instance: Instance) -> None:
        """Like kill -9: its lock holders' connections drop (PostgreSQL frees their locks at once), it stops
        sweeping, and nothing it was doing writes anything more."""
        instance.dead = True
        await instance.harness.bot.stop_maintenance()
        instance.lock._pool.terminate()
        instance.store._db._executor.terminate()  # type: ignore[attr-defined]
        for task in list(instance.harness.bot._tasks):
            task.cancel()
        await asyncio.gather(*instance.harness.bot._tasks, return_exceptions=True)
        instance.harness.bot.answerer.cancel_background()
        await instance.harness.close(shutdown=False)

    async def close(self) -> None:
        for instance in self.instances:
            if not instance.dead:
                await instance.harness.close()
                await instance.lock.close()
                await instance.store.close()


@pytest.fixture
async def cluster() -> AsyncIterator[Cluster]:
    """A fresh PostgreSQL schema and mock Slack workspace for the instances of one test."""
    async with isolated_schema() as schema:
        mock = await MockSlackApi().start()
        group = Cluster(schema, mock)
        try:
            yield group
        finally:
            await group.close()
            await mock.close()
        assert mock.violations == []


async def records(instance: Instance) -> list[Record]:
    """Every record in the shared database, oldest first (read through this instance's connections)."""
    rows = await instance.store._db.fetch("SELECT id FROM records ORDER BY id")
    return [record for row in rows if (record := await instance.store.get_record(int(row["id"])))]


async def delivery_state(instance: Instance, record: Record) -> DeliveryState | None:
    """The record's delivery state in the shared ledger (None before it has one)."""
    delivery = await instance.harness.ledger.read_delivery(record.id)
    return None if delivery is None else delivery.state


async def test_a_message_delivered_to_both_instances_is_answered_once(cluster: Cluster) -> None:
    """The app_mention at one instance, the message event and a Slack retry at the other: one record, one
    post, and the second instance makes no Slack call for its duplicates."""
    a, b = await cluster.start(), await cluster.start()
    mention = a.harness.mention("How do deploys run?", ts="6000.000100")
    message = a.harness.message("<@UBOT> How do deploys run?", ts="6000.000100")
    await asyncio.gather(
        a.harness.event(mention, event_id="EvA"),
        b.harness.event(message, event_id="EvB"),
        b.harness.event(mention, event_id="EvA", retry_num=1),
    )
    for instance in (a, b):
        await instance.harness.bot.wait_idle(10)
    [record] = await records(a)
    assert record.status == RecordStatus.ANSWERED
    assert await delivery_state(a, record) == DeliveryState.DELIVERED
    assert len(cluster.mock.calls_to("chat.postMessage")) == 1
    assert cluster.mock.calls_to("chat.delete") == []
    [reply] = cluster.mock.thread("C1", "6000.000100")
    assert "[1] Ops guide" in reply.block_text()


async def test_a_follow_up_reaching_another_instance_is_answered(cluster: Cluster) -> None:
    """An instance that saw the thread before the bot answered there (by another instance) still answers a
    follow-up without mention: engagement comes from the shared store, not a remembered "no"."""
    a, b = await cluster.start(), await cluster.start()
    early = b.harness.message("anyone?", ts="6000.000150", thread_ts="6000.000200")
    await b.harness.event(early)  # not engaged yet: ignored
    await b.harness.bot.wait_idle(5)
    await a.harness.event(a.harness.mention("How do deploys run?", ts="6000.000200"))
    await a.harness.bot.wait_idle(10)
    follow_up = b.harness.message("and rollbacks?", ts="6000.000300", thread_ts="6000.000200")
    await b.harness.event(follow_up)
    await b.harness.bot.wait_idle(10)
    answered = [r for r in await records(a) if r.status == RecordStatus.ANSWERED]
    assert [r.question for r in answered] == ["How do deploys run?", "and rollbacks?"]
    assert len(cluster.mock.thread("C1", "6000.000200")) == 2
    assert b.parts.engine.calls("rewrite")  # b answered it, with a's turn as history


async def _killed_mid_answer(cluster: Cluster, **survivor_options: Any) -> tuple[Instance, Record]:
    """Instance a starts answering (its model hangs), then dies; returns the survivor and a's record."""
    a = await cluster.start(sweep_interval=3600)
    a.parts.engine.answer_delay = 60  # generation hangs while holding the conversation lock
    b = await cluster.start(**survivor_options)
    await a.harness.event(a.harness.mention("How do deploys run?", ts="6000.000400"), event_id="EvKILL")

    async def placeholder_out() -> Record:
        while True:
            found = await records(b)
            shown = found and (await b.harness.ledger.read_delivery(found[0].id) or Delivery()).reply_ref
            if shown and a.parts.engine.calls("answer"):
                return found[0]
            await asyncio.sleep(0.05)

    record = await asyncio.wait_for(placeholder_out(), SETTLE)
    await cluster.kill(a)
    return b, record


async def test_a_question_of_a_killed_instance_is_interrupted_by_the_survivor(cluster: Cluster) -> None:
    """With KB_RESUME_INTERRUPTED=false: after one instance dies mid-answer, the other's periodic sweep finds
    the record pending with its lock free past the grace period, marks it interrupted and corrects the
    placeholder; a Slack retry of
    the question afterwards finds the corrected message, not silence and not a second answer."""
    b, record = await _killed_mid_answer(cluster, resume_interrupted=False)
    [placeholder] = cluster.mock.thread("C1", "6000.000400")
    assert "⏳" in placeholder.block_text()

    async def corrected() -> Record:
        while True:
            current = await b.store.get_record(record.id)
            if current and await delivery_state(b, current) == DeliveryState.DELIVERED:
                return current
            await asyncio.sleep(0.05)

    final = await asyncio.wait_for(corrected(), SETTLE)
    assert final.status == RecordStatus.INTERRUPTED
    [shown] = cluster.mock.thread("C1", "6000.000400")
    assert shown.ts == placeholder.ts
    assert (
        shown.block_text()
        == "⚠️ This answer was interrupted (the bot stopped or restarted). Please ask again."
    )
    posts = len(cluster.mock.calls_to("chat.postMessage"))
    retry = b.harness.mention("How do deploys run?", ts="6000.000400")
    assert await b.harness.event(retry, event_id="EvKILL", retry_num=2) == 200
    await b.harness.bot.wait_idle(5)
    assert len(cluster.mock.calls_to("chat.postMessage")) == posts
    [still] = cluster.mock.thread("C1", "6000.000400")
    assert "Please ask again" in still.block_text()


async def test_with_resume_on_the_survivor_answers_the_killed_instances_question(cluster: Cluster) -> None:
    """With KB_RESUME_INTERRUPTED the survivor answers the orphaned question again, in the same placeholder."""
    b, record = await _killed_mid_answer(cluster, resume_interrupted=True)

    async def answered() -> Record:
        while True:
            current = await b.store.get_record(record.id)
            if (
                current
                and current.status == RecordStatus.ANSWERED
                and await delivery_state(b, current) == DeliveryState.DELIVERED
            ):
                return current
            await asyncio.sleep(0.05)

    final = await asyncio.wait_for(answered(), SETTLE)
    [shown] = cluster.mock.thread("C1", "6000.000400")
    assert "[1] Ops guide" in shown.block_text() and "⏳" not in shown.block_text()
    assert final.details.previous_answers[0].status == "interrupted"


async def test_a_stream_start_lost_in_a_kill_is_found_by_the_next_instance(cluster: Cluster) -> None:
    """The killed instance's chat.startStream reached Slack but got no answer: the instance started after it
    (default settings, PostgreSQL ledger) finds the open stream, stops it and answers in it; the thread
    ends with one reply, final, and there is one record."""
    a = await cluster.start(sweep_interval=3600, streaming="auto")
    a.parts.engine.answer_delay = 60
    cluster.mock.hold("chat.startStream")
    await a.harness.event(a.harness.mention("How do deploys run?", ts="6000.000500"))
    await cluster.mock.wait_for(lambda: bool(cluster.mock.held), within=SETTLE)
    [lost] = cluster.mock.thread("C1", "6000.000500")
    assert lost.streaming
    [record] = await records(a)
    noted = await a.harness.ledger.read_delivery(record.id)
    assert noted is not None and noted.reply_unknown
    await cluster.kill(a)
    b = await cluster.start(streaming="auto")

    async def answered() -> Record:
        while True:
            [current] = await records(b)
            if (
                current.status == RecordStatus.ANSWERED
                and await delivery_state(b, current) == DeliveryState.DELIVERED
            ):
                return current
            await asyncio.sleep(0.05)

    final = await asyncio.wait_for(answered(), SETTLE)
    [shown] = cluster.mock.thread("C1", "6000.000500")
    assert shown.ts == lost.ts and not shown.streaming
    assert "[1] Ops guide" in shown.block_text() and "⏳" not in shown.block_text()
    delivery = await b.harness.ledger.read_delivery(final.id)
    assert delivery is not None and delivery.reply_ref == f"C1:{lost.ts}" and delivery.resumes == 1
    assert delivery.starting_at == 0.0
