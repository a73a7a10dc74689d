"""Contract tests of the conversation store, run against a real SQLite file and a real PostgreSQL schema."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite
import asyncpg
import pytest

from adapters.store.backends import (
    PostgresConversationStore,
    SqlConversationStore,
    SqliteConversationStore,
    open_store,
)
from adapters.store.errors import StoreUnavailable
from adapters.store.schema import MIGRATIONS, Migration
from core.errors import InvalidInput, NotAllowed, NotFound
from core.models import (
    ContextSnapshot,
    ConversationKey,
    ConversationScope,
    Location,
    RecordOpening,
    RecordStatus,
)
from core.record import NO_DETAILS, CitedSource, PhaseTimings, Record, RecordDetails, UsageTally, Verdict
from core.trace import RetrievalTrace, RoundStep
from tests.adapters.postgres_support import POSTGRES_URL, isolated_schema

BIG = 10**12  # a before_id above every record


@dataclass
class Backend:
    """Opens stores on one database (a SQLite file or a PostgreSQL schema) and queries it directly."""

    name: str
    open: Callable[[Sequence[Migration]], Awaitable[SqlConversationStore]]
    query: Callable[[str], Awaitable[list[tuple[Any, ...]]]]


@pytest.fixture(params=["sqlite", "postgres"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Backend]:
    """A fresh, empty database of each kind."""
    if request.param == "sqlite":
        path = tmp_path / "store.sqlite3"

        async def open_sqlite(migrations: Sequence[Migration]) -> SqlConversationStore:
            return await SqliteConversationStore.open(path, migrations=migrations)

        async def query_sqlite(sql: str) -> list[tuple[Any, ...]]:
            with sqlite3.connect(path) as connection:
                return [tuple(row) for row in connection.execute(sql)]

        yield Backend("sqlite", open_sqlite, query_sqlite)
        return
    async with isolated_schema() as schema:
        settings = {"search_path": schema}

        async def open_postgres(migrations: Sequence[Migration]) -> SqlConversationStore:
            return await PostgresConversationStore.open(
                POSTGRES_URL, migrations=migrations, server_settings=settings
            )

        async def query_postgres(sql: str) -> list[tuple[Any, ...]]:
            connection = await asyncpg.connect(POSTGRES_URL, server_settings=settings)
            try:
                return [tuple(row) for row in await connection.fetch(sql)]
            finally:
                await connection.close()

        yield Backend("postgres", open_postgres, query_postgres)


@pytest.fixture
async def store(backend: Backend) -> AsyncIterator[SqlConversationStore]:
    """An open store on the fresh database, closed afterwards."""
    opened = await backend.open(MIGRATIONS)
    yield opened
    await opened.close()


def new_conversation(thread: str = "1700000000.000100") -> str:
    """The id of a Slack thread's conversation (stored with its first question)."""
    return ConversationKey("slack", "T1", "C1", thread).as_id()


async def add(
    store: SqlConversationStore, conversation: str, question: str, **fields: Any
) -> tuple[Record, bool]:
    """Open a pending record (and its conversation when new) as the pipeline does."""
    return await store.open_record(RecordOpening(ConversationKey.from_id(conversation), question, **fields))


async def answered(store: SqlConversationStore, conversation: str, question: str, answer: str) -> Record:
    record, _ = await add(store, conversation, question)
    return await store.complete_record(record.id, answer=answer, rewritten=None, details=NO_DETAILS)


async def test_opening_records_creates_the_conversation_once(
    backend: Backend, store: SqlConversationStore
) -> None:
    """Two records opened in one new conversation store one conversation row, with the given id."""
    conversation = new_conversation()
    await add(store, conversation, "q1")
    await add(store, conversation, "q2")
    assert conversation == "slack:T1:C1:1700000000.000100"
    assert await backend.query("SELECT id FROM conversations") == [(conversation,)]


async def test_find_conversation_never_creates_one(store: SqlConversationStore) -> None:
    """find_conversation answers None for an unknown key and creates nothing; the id once it exists."""
    key = ConversationKey(source="slack", team_id="T1", channel_id="C9", thread_ts="7.0")
    assert await store.find_conversation(key) is None
    assert await store.find_conversation(key) is None
    record, _ = await add(store, key.as_id(), "q")
    assert await store.find_conversation(key) == record.conversation_id == key.as_id()


async def test_a_used_event_key_returns_the_existing_record(store: SqlConversationStore) -> None:
    """A retried event (same key) gets the stored record back with created=False; no second record."""
    conversation = new_conversation()
    first, created = await add(store, conversation, "问题", event_key="Ev1", reply_to="C1:ts.1")
    again, created_again = await add(store, conversation, "问题(重发)", event_key="Ev1")
    assert (created, created_again) == (True, False)
    assert again == first and again.question == "问题" and again.reply_to == "C1:ts.1"
    assert [r.id for r in await store.list_records(conversation)] == [first.id]


async def test_event_keys_survive_a_restart(backend: Backend) -> None:
    """Deduplication is persisted: after reopening the database the same key is still recognised."""
    store = await backend.open(MIGRATIONS)
    conversation = new_conversation()
    first, _ = await add(store, conversation, "q", event_key="C1:1700000000.000200")
    await store.close()
    store = await backend.open(MIGRATIONS)
    try:
        again, created = await add(store, conversation, "q", event_key="C1:1700000000.000200")
        assert (again.id, created) == (first.id, False)
    finally:
        await store.close()


async def test_twenty_concurrent_questions_are_all_stored_with_unique_ids(
    store: SqlConversationStore,
) -> None:
    """add_question from 20 tasks at once stores 20 records with distinct ids."""
    conversation = new_conversation()
    results = await asyncio.gather(*(add(store, conversation, f"q{i}") for i in range(20)))
    ids = [record.id for record, created in results if created]
    assert len(set(ids)) == 20
    stored = await store.list_records(conversation)
    assert sorted(r.id for r in stored) == sorted(ids)
    assert {r.question for r in stored} == {f"q{i}" for i in range(20)}


async def test_concurrent_duplicates_of_one_event_create_one_record(store: SqlConversationStore) -> None:
    """Ten simultaneous deliveries of one event produce exactly one record, which all of them get."""
    conversation = new_conversation()
    results = await asyncio.gather(*(add(store, conversation, "q", event_key="E") for _ in range(10)))
    assert sum(created for _, created in results) == 1
    assert len({record.id for record, _ in results}) == 1


async def test_recent_turns_returns_the_latest_answered_turns_of_500(store: SqlConversationStore) -> None:
    """Of 500 records (some pending or failed), limit=5 yields the 5 latest answered ones, oldest first."""
    conversation = new_conversation()
    other = new_conversation("other-thread")
    added = await asyncio.gather(*(add(store, conversation, f"问题{i}") for i in range(500)))
    await add(store, other, "another thread's question")
    answers: dict[int, str] = {}
    finishing = []
    for index, (record, _) in enumerate(sorted(added, key=lambda pair: pair[0].id)):
        if index % 7 == 3:
            finishing.append(store.fail_record(record.id, status=RecordStatus.FAILED, reason="x"))
        elif index % 11 != 5:  # left pending
            answers[record.id] = f"答案{index}"
            finishing.append(
                store.complete_record(
                    record.id, answer=answers[record.id], rewritten=None, details=NO_DETAILS
                )
            )
    await asyncio.gather(*finishing)
    answered_ids = sorted(answers)
    turns = await store.recent_turns(conversation, before_id=BIG, after_id=0, limit=5)
    assert [(t.record_id, t.answer) for t in turns] == [(i, answers[i]) for i in answered_ids[-5:]]
    before = answered_ids[100]
    turns = await store.recent_turns(conversation, before_id=before, after_id=answered_ids[96], limit=5)
    assert [t.record_id for t in turns] == answered_ids[97:100]


async def test_history_never_includes_the_current_record_or_later_ones(store: SqlConversationStore) -> None:
    """recent_turns and turns_after only return after_id < id < before_id, even when later turns exist."""
    conversation = new_conversation()
    done = [await answered(store, conversation, f"q{i}", f"a{i}") for i in range(6)]
    current, _ = await add(store, conversation, "current")
    later = await answered(store, conversation, "later", "later answer")
    for turns in (
        await store.recent_turns(conversation, before_id=current.id, after_id=0, limit=20),
        await store.turns_after(conversation, after_id=0, before_id=current.id, limit=20),
    ):
        assert [t.record_id for t in turns] == [r.id for r in done]
    cut = await store.recent_turns(conversation, before_id=done[4].id, after_id=done[1].id, limit=20)
    assert [t.record_id for t in cut] == [done[2].id, done[3].id]
    assert later.id not in [t.record_id for t in cut]
    assert await store.recent_turns(conversation, before_id=BIG, after_id=0, limit=0) == []


async def test_pending_failed_and_interrupted_records_are_not_history(store: SqlConversationStore) -> None:
    """Only answered records become turns."""
    conversation = new_conversation()
    ok = await answered(store, conversation, "ok", "fine")
    await add(store, conversation, "still generating")
    failed, _ = await add(store, conversation, "failed")
    await store.fail_record(failed.id, status=RecordStatus.FAILED, reason="model unavailable")
    cut, _ = await add(store, conversation, "cut")
    await store.fail_record(cut.id, status=RecordStatus.INTERRUPTED, reason="shutdown")
    turns = await store.recent_turns(conversation, before_id=BIG, after_id=0, limit=10)
    assert [(t.record_id, t.question, t.answer) for t in turns] == [(ok.id, "ok", "fine")]


async def test_turns_after_pages_oldest_first(store: SqlConversationStore) -> None:
    """turns_after returns consecutive pages of at most `limit` turns, starting after the watermark."""
    conversation = new_conversation()
    ids = [(await answered(store, conversation, f"q{i}", f"a{i}")).id for i in range(45)]
    pages, cursor = [], 0
    while page := await store.turns_after(conversation, after_id=cursor, before_id=BIG):
        pages.append([t.record_id for t in page])
        cursor = page[-1].record_id
    assert [len(p) for p in pages] == [20, 20, 5]
    assert [i for p in pages for i in p] == ids


async def test_a_turn_names_the_document_its_answer_cites_most_first(store: SqlConversationStore) -> None:
    """Citations are stored by evidence number; the turn lists the document most citations point at first,
    so a follow-up keeps the answer's topic, not the stray paragraph that ranked first."""
    conversation = new_conversation()
    record, _ = await add(store, conversation, "租房合同最长能签多少年？")
    details = RecordDetails(citations=(CitedSource(1, "劳动法.md", ""), CitedSource(2, "合同编.md", "")))
    await store.complete_record(
        record.id,
        answer="租赁期限不得超过二十年 [2]\n可以续订 [2]\n劳动合同续延 [1]",
        rewritten="",
        details=details,
    )
    [turn] = await store.recent_turns(conversation, before_id=BIG, after_id=0, limit=5)
    assert turn.cited == ("合同编.md", "劳动法.md")


async def test_complete_record_writes_everything_at_once(store: SqlConversationStore) -> None:
    """Answer, rewritten question, details and status arrive together and read back identically."""
    conversation = new_conversation()
    record, _ = await add(store, conversation, "那它们各自占用多少内存?", asked_by="slack:T1:U1")
    assert (record.status, record.answer, record.details) == (RecordStatus.PENDING, None, NO_DETAILS)
    details = RecordDetails(
        citations=(CitedSource(1, "Java 基础.md", "基本数据类型", location=Location(page=3)),),
        usage=UsageTally(prompt_tokens=120, completion_tokens=45),
        trace=RetrievalTrace(
            rounds=(RoundStep(1, ("Java 基本数据类型 内存",), sufficient=True),), run_time=0.5
        ),
        notice="“引号”、emoji 🙂 和 \\ 反斜杠",
    )
    done = await store.complete_record(
        record.id, answer="int 占 4 字节 [1]", rewritten="Java 基本数据类型各自占用多少内存?", details=details
    )
    assert done == await store.get_record(record.id)
    assert done.status == RecordStatus.ANSWERED and done.answer == "int 占 4 字节 [1]"
    assert done.rewritten == "Java 基本数据类型各自占用多少内存?"
    assert done.details == details and done.asked_by == "slack:T1:U1"
    assert done.updated_at >= done.created_at > 0


async def test_an_answered_record_is_never_overwritten(store: SqlConversationStore) -> None:
    """complete_record on an answered, failed or interrupted record raises NotAllowed and changes nothing."""
    conversation = new_conversation()
    done = await answered(store, conversation, "q", "first answer")
    with pytest.raises(NotAllowed):
        await store.complete_record(done.id, answer="second", rewritten=None, details=RecordDetails(lang="x"))
    assert await store.get_record(done.id) == done
    failed, _ = await add(store, conversation, "q2")
    failed = await store.fail_record(failed.id, status=RecordStatus.INTERRUPTED, reason="shutdown")
    with pytest.raises(NotAllowed):
        await store.complete_record(failed.id, answer="late", rewritten=None, details=NO_DETAILS)
    assert await store.get_record(failed.id) == failed


async def test_fail_record_on_an_answered_record_is_a_no_op(store: SqlConversationStore) -> None:
    """A late failure (e.g. a timeout firing after the answer was saved) leaves the answer intact."""
    conversation = new_conversation()
    done = await answered(store, conversation, "q", "the answer")
    late = RecordDetails(lang="x")
    result = await store.fail_record(done.id, status=RecordStatus.FAILED, reason="late", details=late)
    assert result == done == await store.get_record(done.id)


async def test_fail_record_keeps_the_reason_and_never_an_answer(store: SqlConversationStore) -> None:
    """A failed record has no answer, its reason as details.failure, and earlier details kept."""
    conversation = new_conversation()
    record, _ = await add(store, conversation, "q")
    await store.add_feedback(record.id, person="U1", value="up", at=1.0)
    stage = RecordDetails(timings=PhaseTimings(context=0.25))
    failed = await store.fail_record(
        record.id, status=RecordStatus.FAILED, reason="模型服务暂时不可用", details=stage
    )
    assert failed.status == RecordStatus.FAILED and failed.answer is None
    assert failed.details == RecordDetails(
        feedback=(Verdict("U1", "up", 1.0),),
        timings=PhaseTimings(context=0.25),
        failure="模型服务暂时不可用",
    )
    with pytest.raises(InvalidInput):
        await store.fail_record(record.id, status=RecordStatus.ANSWERED, reason="no")


async def test_re_chat_keeps_the_old_answer_and_allows_a_new_one(store: SqlConversationStore) -> None:
    """reopen_record archives the answer in details.previous_answers; the next completion keeps it."""
    conversation = new_conversation()
    record, _ = await add(store, conversation, "q")
    first, later = RetrievalTrace(rounds=(RoundStep(1),)), RetrievalTrace(rounds=(RoundStep(1), RoundStep(2)))
    await store.complete_record(
        record.id, answer="old", rewritten="old q", details=RecordDetails(trace=first)
    )
    await store.add_feedback(record.id, person="U1", value="down", at=2.0)
    reset = await store.reopen_record(record.id, conversation)
    assert (reset.status, reset.answer, reset.rewritten) == (RecordStatus.PENDING, None, None)
    [archived] = reset.details.previous_answers
    assert archived.answer == "old" and archived.rewritten == "old q"
    assert archived.status == RecordStatus.ANSWERED
    assert archived.details == RecordDetails(trace=first, feedback=(Verdict("U1", "down", 2.0),))
    assert reset.details == RecordDetails(previous_answers=(archived,))
    assert await store.recent_turns(conversation, before_id=BIG, after_id=0, limit=5) == []
    assert await store.reopen_record(record.id, conversation) == reset  # pending already: unchanged
    again = await store.complete_record(
        record.id, answer="new", rewritten=None, details=RecordDetails(trace=later)
    )
    assert again.answer == "new" and again.details.trace == later
    assert again.details.previous_answers == (archived,)
    second = await store.reopen_record(record.id, conversation)
    assert [a.answer for a in second.details.previous_answers] == ["old", "new"]


async def test_feedback_keeps_each_persons_latest_verdict(store: SqlConversationStore) -> None:
    """add_feedback sets one person's entry (a later one replaces it), keeps the others and the answer."""
    conversation = new_conversation()
    done = await answered(store, conversation, "q", "a")
    await store.add_feedback(done.id, person="slack:T1:U1", value="down", at=1.0)
    await store.add_feedback(done.id, person="slack:T1:U2", value="up", at=2.0)
    record = await store.add_feedback(done.id, person="slack:T1:U1", value="up", at=3.0)
    assert record == await store.get_record(done.id)
    assert record is not None and record.answer == "a"
    assert record.details == RecordDetails(
        feedback=(Verdict("slack:T1:U1", "up", 3.0), Verdict("slack:T1:U2", "up", 2.0))
    )
    assert await store.add_feedback(done.id + 1000, person="U1", value="up", at=1.0) is None
    with pytest.raises(InvalidInput):
        await store.add_feedback(done.id, person='U"1', value="up", at=1.0)


async def test_unknown_ids(store: SqlConversationStore) -> None:
    """Writes to an unknown record raise NotFound (reopening one of another conversation too); absurd ids
    InvalidInput."""
    conversation = new_conversation()
    record, _ = await add(store, conversation, "q")
    missing = record.id + 1000
    assert await store.get_record(missing) is None
    with pytest.raises(InvalidInput):
        await store.get_record(2**70)  # no database integer holds it
    for call in (
        store.complete_record(missing, answer="a", rewritten=None, details=NO_DETAILS),
        store.fail_record(missing, status=RecordStatus.FAILED, reason="x"),
        store.reopen_record(missing, conversation),
        store.reopen_record(record.id, new_conversation("another-thread")),
    ):
        with pytest.raises(NotFound):
            await call


async def test_a_context_for_an_unknown_conversation_is_refused(store: SqlConversationStore) -> None:
    """save_context raises NotFound for a conversation that was never created (no question opened it)."""
    with pytest.raises(NotFound):
        await store.save_context("slack:T:C:nope", expected_revision=0, snapshot=ContextSnapshot(summary="s"))


@pytest.mark.parametrize("garbage", ["abc\x00def", "broken \ud800 surrogate"])
async def test_unstorable_questions_get_a_clear_error_and_store_nothing(
    store: SqlConversationStore, garbage: str
) -> None:
    """NUL or an unpaired surrogate in a question is rejected with InvalidInput on both backends."""
    conversation = new_conversation()
    with pytest.raises(InvalidInput) as raised:
        await add(store, conversation, garbage)
    assert "cannot be stored" in raised.value.message("en")
    assert await store.list_records(conversation) == []


async def test_generated_text_with_unstorable_characters_is_kept_not_lost(
    store: SqlConversationStore,
) -> None:
    """An answer or detail containing NUL is stored with U+FFFD instead of failing the record."""
    conversation = new_conversation()
    record, _ = await add(store, conversation, "q")
    details = RecordDetails(answer_error="x\x00y", timings=PhaseTimings(total=float("nan")))
    done = await store.complete_record(record.id, answer="a\x00b", rewritten=None, details=details)
    assert done.status == RecordStatus.ANSWERED
    assert done.answer == "a\ufffdb"
    assert done.details == RecordDetails(answer_error="x\ufffdy", timings=PhaseTimings(total=None))


async def test_list_records_returns_the_latest_oldest_first(store: SqlConversationStore) -> None:
    """list_records is bounded: the latest `limit` records of any status, in order."""
    conversation = new_conversation()
    ids = [(await add(store, conversation, f"q{i}"))[0].id for i in range(8)]
    assert [r.id for r in await store.list_records(conversation, limit=3)] == ids[-3:]
    assert [r.id for r in await store.list_records(conversation)] == ids


async def test_pending_records_after_a_crash_can_be_marked_interrupted(backend: Backend) -> None:
    """Records left pending survive a restart, are listed oldest first, and leave the list once marked."""
    store = await backend.open(MIGRATIONS)
    conversation = new_conversation()
    first, _ = await add(store, conversation, "in flight 1", reply_to="C1:ts.1")
    await answered(store, conversation, "done", "answer")
    second, _ = await add(store, conversation, "in flight 2")
    await store.close()  # the "crash"
    store = await backend.open(MIGRATIONS)
    try:
        pending = await store.pending_records()
        assert [(r.id, r.reply_to) for r in pending] == [(first.id, "C1:ts.1"), (second.id, None)]
        for record in pending:
            await store.fail_record(record.id, status=RecordStatus.INTERRUPTED, reason="restart")
        assert await store.pending_records() == []
        assert (await store.get_record(first.id) or first).status == RecordStatus.INTERRUPTED
    finally:
        await store.close()


async def test_context_is_zero_until_saved_then_round_trips(store: SqlConversationStore) -> None:
    """read_context gives revision 0 when absent; a save is read back with revision + 1."""
    conversation = new_conversation()
    await add(store, conversation, "q")  # opens the conversation
    assert await store.read_context(conversation) == ContextSnapshot()
    snapshot = ContextSnapshot(summary="用户目标:了解 Java 内存", through_record_id=12, compacted_rounds=4)
    assert await store.save_context(conversation, expected_revision=0, snapshot=snapshot)
    stored = await store.read_context(conversation)
    assert (stored.summary, stored.through_record_id, stored.compacted_rounds, stored.revision) == (
        "用户目标:了解 Java 内存",
        12,
        4,
        1,
    )
    assert stored.updated_at > 0


async def test_only_one_of_two_concurrent_context_writers_wins(store: SqlConversationStore) -> None:
    """Two writers with the same expected revision: exactly one succeeds and its snapshot is stored."""
    conversation = new_conversation()
    await add(store, conversation, "q")  # opens the conversation
    for expected in (0, 1):
        writes = [
            ContextSnapshot(summary=f"writer {n} at {expected}", through_record_id=10 * expected + n)
            for n in (1, 2)
        ]
        results = await asyncio.gather(
            *(store.save_context(conversation, expected_revision=expected, snapshot=s) for s in writes)
        )
        assert sorted(results) == [False, True]
        winner = writes[results.index(True)]
        stored = await store.read_context(conversation)
        assert (stored.summary, stored.revision) == (winner.summary, expected + 1)


async def test_a_stale_revision_never_overwrites_or_creates(store: SqlConversationStore) -> None:
    """save_context returns False for a revision that is not the stored one, absent rows included."""
    conversation = new_conversation()
    await add(store, conversation, "q")  # opens the conversation
    assert not await store.save_context(conversation, expected_revision=3, snapshot=ContextSnapshot("x"))
    assert await store.read_context(conversation) == ContextSnapshot()
    assert await store.save_context(conversation, expected_revision=0, snapshot=ContextSnapshot("first"))
    assert not await store.save_context(conversation, expected_revision=0, snapshot=ContextSnapshot("stale"))
    assert (await store.read_context(conversation)).summary == "first"


async def test_conversations_are_matched_by_id_prefix_name_and_thread(store: SqlConversationStore) -> None:
    """match_conversations finds ids by prefix, terminal names by prefix, Slack threads by their ts."""
    thread = new_conversation("1700000000.000100")
    other = new_conversation("1700000099.000200")
    named = ConversationKey(source="cli", channel_id="7d17a67bb665").as_id()
    for conversation in (thread, other, named):
        await add(store, conversation, "q")
    assert await store.match_conversations("7d17") == [named]
    assert await store.match_conversations("cli::7d17a67bb665:") == [named]
    assert await store.match_conversations("1700000000.000100") == [thread]
    assert set(await store.match_conversations("slack:T1:C1")) == {thread, other}
    assert await store.match_conversations("slack:T1:C1", limit=1) in ([thread], [other])
    assert await store.match_conversations("nothing") == [] == await store.match_conversations("")
    assert await store.match_conversations("%") == [] == await store.match_conversations("_")


async def test_a_scope_is_stored_once_and_read_back(store: SqlConversationStore) -> None:
    """The scope of the first question opened in a conversation wins; later questions' scopes do not."""
    conversation = new_conversation()
    assert await store.read_scope(conversation) is None
    first = ConversationScope(datasets=("法规", "handbook"), search_mode="keywords", retrieval_mode=None)
    await add(store, conversation, "q1", scope=first)
    later = ConversationScope(datasets=("other",), search_mode="blend", retrieval_mode="multi")
    await add(store, conversation, "q2", scope=later)
    assert await store.read_scope(conversation) == first
    assert await store.read_scope("slack:T9:C9:1.0") is None


async def test_conversations_of_a_first_version_database_get_an_empty_scope(backend: Backend) -> None:
    """A database made before scopes existed is upgraded in place: its conversations read no scope
    until one is saved, and their records are kept."""
    old = await backend.open(MIGRATIONS[:1])
    conversation = new_conversation()
    await old.close()
    await backend.query(
        "INSERT INTO conversations (id, source, team_id, channel_id, thread_ts, created_at)"
        f" VALUES ('{conversation}', 'slack', 'T1', 'C1', '1700000000.000100', 1)"
    )
    # Written as the first version's code wrote it (today's store writes columns that version lacks).
    await backend.query(
        "INSERT INTO records (conversation_id, question, answer, status, created_at, updated_at)"
        f" VALUES ('{conversation}', '旧问题', '旧回答', 'answered', 1, 1)"
    )
    store = await backend.open(MIGRATIONS)
    try:
        assert await store.read_scope(conversation) is None
        scope = ConversationScope(datasets=("handbook",))
        await add(store, conversation, "新问题", scope=scope)
        assert await store.read_scope(conversation) == scope
        kept, _ = await store.list_records(conversation)
        assert (kept.question, kept.answer, kept.status) == ("旧问题", "旧回答", RecordStatus.ANSWERED)
    finally:
        await store.close()


_NEXT = len(MIGRATIONS) + 1
_CURRENT = [(version,) for version in range(1, _NEXT)]
_V2 = Migration(
    _NEXT,
    "record language and a probe",
    (
        "ALTER TABLE records ADD COLUMN language TEXT NOT NULL DEFAULT 'zh'",
        "CREATE TABLE migration_probe (applied INTEGER NOT NULL)",
        "INSERT INTO migration_probe (applied) VALUES (1)",
    ),
)


async def test_a_later_migration_upgrades_an_existing_database_once(backend: Backend) -> None:
    """A current database opened with one more migration gets it applied exactly once, data kept."""
    store = await backend.open(MIGRATIONS)
    conversation = new_conversation()
    kept = await answered(store, conversation, "旧问题", "旧回答")
    await store.close()
    assert await backend.query("SELECT version FROM schema_version ORDER BY version") == _CURRENT
    for _ in range(2):
        store = await backend.open((*MIGRATIONS, _V2))
        assert await store.get_record(kept.id) == kept
        await store.close()
    assert await backend.query("SELECT version FROM schema_version ORDER BY version") == [
        *_CURRENT,
        (_NEXT,),
    ]
    assert await backend.query("SELECT applied FROM migration_probe") == [(1,)]
    assert await backend.query("SELECT question, language FROM records") == [("旧问题", "zh")]


async def test_a_newer_database_is_refused_by_older_code(backend: Backend) -> None:
    """Opening a database migrated past the known versions raises StoreUnavailable."""
    await (await backend.open((*MIGRATIONS, _V2))).close()
    with pytest.raises(StoreUnavailable, match="newer"):
        await backend.open(MIGRATIONS)


async def test_concurrent_opens_migrate_once(backend: Backend) -> None:
    """Several instances opening one fresh database at once all succeed and each version is recorded once."""
    stores = await asyncio.gather(*(backend.open(MIGRATIONS) for _ in range(4)))
    for opened in stores:
        await opened.close()
    assert await backend.query("SELECT version FROM schema_version ORDER BY version") == _CURRENT


async def test_recent_turns_cost_does_not_grow_with_the_table(tmp_path: Path) -> None:
    """SQLite's VM steps for recent_turns(limit=5) stay flat from 50 to 500 answered turns (LIMIT in SQL)."""
    steps = 0

    def count() -> int:
        nonlocal steps
        steps += 1
        return 0

    async def hook(connection: aiosqlite.Connection) -> None:
        await connection.set_progress_handler(count, 1)

    store = await SqliteConversationStore.open(tmp_path / "steps.sqlite3", on_connect=hook)
    try:
        conversation = new_conversation()
        costs = []
        for added in (50, 450):
            for _ in range(added):
                await answered(store, conversation, "q", "a")
            steps = 0
            turns = await store.recent_turns(conversation, before_id=BIG, after_id=0, limit=5)
            costs.append(steps)
            assert len(turns) == 5
        assert costs[1] < costs[0] * 1.5, costs
    finally:
        await store.close()


async def test_two_sqlite_stores_share_one_file(tmp_path: Path) -> None:
    """Two instances on one SQLite file (WAL, busy timeout) write concurrently without losing records."""
    path = tmp_path / "shared.sqlite3"
    first, second = [await SqliteConversationStore.open(path) for _ in range(2)]
    try:
        conversation = new_conversation()
        await asyncio.gather(*(add(s, conversation, f"q{i}") for i in range(30) for s in (first, second)))
        assert len(await second.list_records(conversation)) == 60
    finally:
        await first.close()
        await second.close()


async def test_open_store_chooses_the_backend_by_url(tmp_path: Path) -> None:
    """sqlite:/// opens a file in an existing folder; other schemes, a missing path or a folder that does
    not exist (a typo) are clear errors, and nothing is created for them."""
    path = tmp_path / "conversations.sqlite3"
    store = await open_store(f"sqlite:///{path}")
    try:
        assert isinstance(store, SqliteConversationStore) and path.exists()
    finally:
        await store.close()
    typo = tmp_path / "nested" / "kb" / "conversations.sqlite3"
    with pytest.raises(InvalidInput) as raised:
        await open_store(f"sqlite:///{typo}")
    assert str(tmp_path / "nested" / "kb") in raised.value.message("en")
    assert not (tmp_path / "nested").exists()
    for bad in ("mysql://localhost/db", "sqlite://", "conversations.db"):
        with pytest.raises(InvalidInput):
            await open_store(bad)


async def test_open_store_reaches_postgres_by_url() -> None:
    """postgresql:// URLs open the PostgreSQL store; query parameters become server settings."""
    async with isolated_schema() as schema:
        store = await open_store(f"{POSTGRES_URL}?search_path={schema}")
        try:
            assert isinstance(store, PostgresConversationStore)
            record, _ = await add(store, new_conversation(), "q")
            assert await store.find_conversation(ConversationKey.from_id(record.conversation_id))
        finally:
            await store.close()


async def test_an_unreachable_postgres_is_reported_without_the_password() -> None:
    """A refused connection raises StoreUnavailable whose text never contains the password."""
    with pytest.raises(StoreUnavailable) as raised:
        await open_store("postgresql://kb:s3cret@127.0.0.1:1/kb")
    assert "s3cret" not in str(raised.value) and "127.0.0.1:1/kb" in str(raised.value)
