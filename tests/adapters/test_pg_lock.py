"""PostgresConversationLock against the local PostgreSQL: two lock objects stand in for two bot instances."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest

from adapters.store.errors import StoreUnavailable
from adapters.store.pg_lock import PostgresConversationLock
from tests.adapters.postgres_support import POSTGRES_URL, require_postgres


@pytest.fixture
async def instances() -> AsyncIterator[tuple[PostgresConversationLock, PostgresConversationLock]]:
    """Two locks, each with its own connection pool, as two processes would have."""
    await require_postgres()
    first = await PostgresConversationLock.connect(POSTGRES_URL, max_size=4)
    second = await PostgresConversationLock.connect(POSTGRES_URL, max_size=4)
    yield first, second
    await first.close()
    await second.close()


def conversation() -> str:
    return f"slack:T1:C1:{uuid.uuid4().hex}"  # unique: advisory locks are database-wide


async def test_two_instances_never_hold_one_conversation_at_once(
    instances: tuple[PostgresConversationLock, PostgresConversationLock],
) -> None:
    """Eight holders spread over two instances enter one conversation strictly one at a time."""
    key = conversation()
    inside: list[str] = []
    overlaps: list[list[str]] = []
    entered: list[str] = []

    async def work(lock: PostgresConversationLock, name: str) -> None:
        async with lock.hold(key):
            inside.append(name)
            entered.append(name)
            if len(inside) > 1:
                overlaps.append(list(inside))
            await asyncio.sleep(0.02)
            inside.remove(name)

    await asyncio.gather(*(work(instances[i % 2], f"holder{i}") for i in range(8)))
    assert overlaps == [] and sorted(entered) == sorted(f"holder{i}" for i in range(8))


async def test_different_conversations_are_held_concurrently(
    instances: tuple[PostgresConversationLock, PostgresConversationLock],
) -> None:
    """Holding one conversation does not block another, on the same or the other instance."""
    first, second = instances
    both_inside = asyncio.Event()
    arrived = 0

    async def meet(lock: PostgresConversationLock, key: str) -> None:
        nonlocal arrived
        async with lock.hold(key):
            arrived += 1
            if arrived == 3:
                both_inside.set()
            await asyncio.wait_for(both_inside.wait(), timeout=5)

    await asyncio.gather(
        meet(first, conversation()), meet(second, conversation()), meet(first, conversation())
    )
    assert both_inside.is_set()


async def test_local_waiters_are_served_in_arrival_order(
    instances: tuple[PostgresConversationLock, PostgresConversationLock],
) -> None:
    """Within one instance, queued holders of a conversation enter first come first served."""
    lock = instances[0]
    key = conversation()
    order: list[int] = []
    release = asyncio.Event()

    async def first_holder() -> None:
        async with lock.hold(key):
            order.append(0)
            await release.wait()

    async def queued(n: int) -> None:
        async with lock.hold(key):
            order.append(n)

    tasks = [asyncio.create_task(first_holder())]
    await asyncio.sleep(0.05)
    for n in range(1, 6):
        tasks.append(asyncio.create_task(queued(n)))
        await asyncio.sleep(0)
    await asyncio.sleep(0.02)
    assert lock.waiting(key) == 6
    release.set()
    await asyncio.gather(*tasks)
    assert order == [0, 1, 2, 3, 4, 5]
    assert lock.waiting(key) == 0


async def test_waiting_counts_holders_and_waiters_of_this_instance(
    instances: tuple[PostgresConversationLock, PostgresConversationLock],
) -> None:
    """waiting() is 0 when free, counts the local holder and local waiters, and ignores other instances."""
    first, second = instances
    key = conversation()
    entered = asyncio.Event()

    async def wait_on_second() -> None:
        async with second.hold(key):
            entered.set()

    assert first.waiting(key) == 0
    async with first.hold(key):
        waiter = asyncio.create_task(wait_on_second())
        await asyncio.sleep(0.1)
        counts = (first.waiting(key), second.waiting(key))
        blocked = not entered.is_set()  # the other instance holds it in PostgreSQL
    await asyncio.wait_for(waiter, timeout=5)
    assert counts == (1, 1) and blocked and entered.is_set()
    assert (first.waiting(key), second.waiting(key)) == (0, 0)


async def test_a_cancelled_waiter_leaves_the_lock_free(
    instances: tuple[PostgresConversationLock, PostgresConversationLock],
) -> None:
    """Cancelling a holder blocked on the other instance's lock never leaves the conversation locked."""
    first, second = instances
    key = conversation()
    holding = asyncio.Event()
    release = asyncio.Event()

    async def hold_until_released() -> None:
        async with first.hold(key):
            holding.set()
            await release.wait()

    async def blocked() -> None:
        async with second.hold(key):
            pytest.fail("entered while the other instance held the conversation")

    holder = asyncio.create_task(hold_until_released())
    await holding.wait()
    waiter = asyncio.create_task(blocked())
    try:
        await asyncio.sleep(0.1)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
    finally:
        release.set()
        await holder
    async with asyncio.timeout(5), second.hold(key):
        pass


async def test_an_exception_inside_releases_the_lock_for_the_other_instance(
    instances: tuple[PostgresConversationLock, PostgresConversationLock],
) -> None:
    """A holder that raises still releases the advisory lock; the error propagates unchanged."""
    first, second = instances
    key = conversation()
    with pytest.raises(ValueError, match="boom"):
        async with first.hold(key):
            raise ValueError("boom")
    async with asyncio.timeout(5), second.hold(key):
        pass


async def test_an_unreachable_database_is_a_store_error() -> None:
    """Connecting the lock to a closed port raises StoreUnavailable."""
    with pytest.raises(StoreUnavailable):
        await PostgresConversationLock.connect("postgresql://kb@127.0.0.1:1/kb", max_size=1)
