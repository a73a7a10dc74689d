"""Finding questions a dead instance left pending: records still pending whose conversation lock has been
seen free for longer than a grace period.

A live answer holds its conversation's lock, and a question queued behind it waits on that lock, so a free
lock under a pending record means nobody is answering it, unless the record is in the brief hand-over
between two holders. The sweeper therefore never judges from one look: it remembers when it first saw
each record's lock free and interrupts the record only when the lock is still free `grace` seconds later.
Any sighting of the lock held starts the clock again. Marking
happens while holding the lock, after re-reading the record, so an answer that started meanwhile wins.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from core.models import RecordStatus
from core.ports import ConversationLock, Records
from core.record import Record

log = logging.getLogger(__name__)

DEFAULT_GRACE = 60.0
DEFAULT_PROBE = 0.2
INTERRUPTED_REASON = "interrupted: the instance answering it stopped"


class OrphanSweeper:
    """One sweep at a time: look at every pending record, interrupt those orphaned for longer than grace."""

    def __init__(
        self,
        store: Records,
        lock: ConversationLock,
        *,
        grace: float = DEFAULT_GRACE,
        probe: float = DEFAULT_PROBE,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.lock = lock
        self.grace = grace
        self.probe = probe
        self._clock = clock
        self._free_since: dict[int, float] = {}

    async def _lock_is_free(self, conversation_id: str) -> bool:
        try:
            async with asyncio.timeout(self.probe), self.lock.hold(conversation_id):
                return True
        except TimeoutError:
            return False

    async def sweep(self) -> list[Record]:
        """Records interrupted by this sweep (their placeholders are the caller's to correct)."""
        now = self._clock()
        pending = await self.store.pending_records()
        seen = {record.id for record in pending}
        for record_id in list(self._free_since):
            if record_id not in seen:
                del self._free_since[record_id]
        interrupted: list[Record] = []
        for record in pending:
            if not await self._lock_is_free(record.conversation_id):
                self._free_since.pop(record.id, None)
                continue
            first_seen = self._free_since.setdefault(record.id, now)
            if now - first_seen < self.grace:
                continue
            marked = await self._interrupt(record)
            if marked is not None:
                interrupted.append(marked)
            self._free_since.pop(record.id, None)
        return interrupted

    async def _interrupt(self, record: Record) -> Record | None:
        try:
            async with asyncio.timeout(self.probe), self.lock.hold(record.conversation_id):
                current = await self.store.get_record(record.id)
                if current is None or current.status != RecordStatus.PENDING:
                    return None
                if current.updated_at != record.updated_at:
                    return None  # it moved (answered again, reset): not an orphan
                log.warning("record %s was left pending by a stopped instance; interrupting it", record.id)
                return await self.store.fail_record(
                    record.id, status=RecordStatus.INTERRUPTED, reason=INTERRUPTED_REASON
                )
        except TimeoutError:
            return None
