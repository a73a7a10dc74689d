"""A throttled in-place editor for one Slack message: coalesced intermediate edits, a guaranteed final edit.

Intermediate states (phases, streamed text) replace each other; at most one chat.update per
`min_interval` seconds goes out for the message, and only when the workspace budget has a spare token.
The final state waits for its turn and is always sent; nothing intermediate is sent after it. A 429 pauses
the shared budget for its Retry-After; retrying a failed final edit is the caller's decision
(adapters.slack.delivery.outbox), since it may have to bypass the budget.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.delivery.slack_errors import CALL_ERRORS, CallFailure, failure_of
from adapters.slack.delivery.update_budget import UpdateBudget
from adapters.slack.rendering.blocks import SlackMessage

log = logging.getLogger(__name__)

DEFAULT_MIN_INTERVAL = 1.0


class MessageEditor:
    """Edits one message (channel, ts) in place, within the per-message and workspace limits."""

    def __init__(
        self,
        client: AsyncWebClient,
        *,
        channel: str,
        ts: str,
        budget: UpdateBudget,
        min_interval: float = DEFAULT_MIN_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.channel = channel
        self.ts = ts
        self.budget = budget
        self.min_interval = min_interval
        self._clock = clock
        self._last_edit = clock()  # the post itself counts as the message's last write
        self._pending: SlackMessage | Callable[[], SlackMessage] | None = None
        self._wake = asyncio.Event()
        self._send_lock = asyncio.Lock()
        self._finished = False
        self._task: asyncio.Task[None] | None = None
        self.coalesced = 0
        self._open = True
        budget.opened()

    def show(self, message: SlackMessage | Callable[[], SlackMessage]) -> None:
        """Make message the latest intermediate state (never blocks; may be coalesced or dropped).

        A callable is rendered only when an edit really goes out, so fast streams cost nothing extra.
        """
        if self._finished:
            return
        if self._pending is not None:
            self.coalesced += 1
        self._pending = message
        if self._task is None:
            self._task = asyncio.create_task(self._flush_loop(), name=f"edit {self.channel}:{self.ts}")
        self._wake.set()

    async def _flush_loop(self) -> None:
        while not self._finished:
            await self._wake.wait()
            self._wake.clear()
            while self._pending is not None and not self._finished:
                delay = self._last_edit + self.min_interval - self._clock()
                if delay > 0:
                    await asyncio.sleep(delay)
                    continue
                if not self.budget.try_acquire():
                    await asyncio.sleep(self.min_interval)
                    continue
                async with self._send_lock:
                    pending, self._pending = self._pending, None
                    if self._finished or pending is None:
                        return
                    await self._update(
                        pending if isinstance(pending, SlackMessage) else pending(), final=False
                    )

    async def _update(self, message: SlackMessage, *, final: bool) -> CallFailure | None:
        self._last_edit = self._clock()
        try:
            await self.client.chat_update(
                channel=self.channel, ts=self.ts, text=message.text, blocks=message.blocks
            )
            return None
        except CALL_ERRORS as exc:
            failure = failure_of(exc)
            if failure.retry_after is not None:
                self.budget.pause(failure.retry_after)
            level = logging.WARNING if final else logging.INFO
            log.log(level, "chat.update %s:%s failed: %s", self.channel, self.ts, failure.code)
            return failure
        finally:
            self._last_edit = self._clock()

    async def finish(self, message: SlackMessage) -> CallFailure | None:
        """Replace the message with its final content: waits for the interval and the budget, always sends.
        None when Slack acknowledged it, else why it failed."""
        self._finished = True
        self._pending = None
        self._wake.set()
        async with self._send_lock:  # an intermediate edit already on the wire completes first
            await self.close()
            delay = self._last_edit + self.min_interval - self._clock()
            if delay > 0:
                await asyncio.sleep(delay)
            await self.budget.acquire()
            return await self._update(message, final=True)

    def _release(self) -> None:
        if self._open:
            self._open = False
            self.budget.closed()

    async def close(self) -> None:
        """Stop the background flusher without sending anything more."""
        self._finished = True
        self._release()
        task, self._task = self._task, None
        if task is not None and task is not asyncio.current_task():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
