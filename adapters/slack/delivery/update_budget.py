"""A workspace-wide budget for chat.update (Tier 3, ~50 per minute), shared by every message being edited.

It is a token bucket whose tokens come back one window after they were spent (a sliding window), so no
60-second span ever holds more than `limit` calls, bursts included. Intermediate edits only take a token
when one is free beyond a small reserve and no final edit is waiting; final edits wait for a token and
go first, so under pressure intermediate phases are dropped, never the final content. Every message being
edited holds back one token for its own final edit, so a burst of answers cannot spend the budget on
phases and then wait for it to finish. When Slack answers 429 anyway (another app, another instance),
pause(Retry-After) stops every edit until then.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable

DEFAULT_LIMIT = 50
DEFAULT_WINDOW = 60.0
DEFAULT_RESERVE = 20  # kept for final edits of answers that have not started yet (bursts)
DEFAULT_MARGIN = 1.0


class UpdateBudget:
    """At most `limit` chat.update calls per `window` seconds for the whole workspace."""

    def __init__(
        self,
        *,
        limit: int = DEFAULT_LIMIT,
        window: float = DEFAULT_WINDOW,
        reserve: int = DEFAULT_RESERVE,
        margin: float = DEFAULT_MARGIN,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = max(1, limit)
        self.window = window + margin  # Slack counts a call when it arrives, a little after we grant it
        self.reserve = max(0, min(reserve, self.limit - 1))
        self._clock = clock
        self._spent: deque[float] = deque()
        self._finals_waiting = 0
        self._paused_until = 0.0
        self.open_messages = 0  # messages being edited that will still need their final edit
        self._lock = asyncio.Lock()
        self.granted_intermediate = 0
        self.refused_intermediate = 0
        self.granted_final = 0

    def _expire(self) -> None:
        horizon = self._clock() - self.window
        while self._spent and self._spent[0] <= horizon:
            self._spent.popleft()

    @property
    def available(self) -> int:
        """Tokens free right now (none while paused by a Retry-After)."""
        self._expire()
        if self._clock() < self._paused_until:
            return 0
        return self.limit - len(self._spent)

    def pause(self, seconds: float) -> None:
        """Slack said Retry-After: no edit until then."""
        self._paused_until = max(self._paused_until, self._clock() + seconds)

    def paused_for(self) -> float:
        """Seconds until a Retry-After pause ends (0 when not paused)."""
        return max(0.0, self._paused_until - self._clock())

    def opened(self) -> None:
        """A message started being edited: keep a token free for its final edit."""
        self.open_messages += 1

    def closed(self) -> None:
        """A message got its final edit (or was abandoned)."""
        self.open_messages = max(0, self.open_messages - 1)

    def spend(self) -> None:
        """Count a call made outside the budget (a retried final edit), so later grants stay honest."""
        self._expire()
        self._spent.append(self._clock())
        self.granted_final += 1

    def try_acquire(self) -> bool:
        """Take a token for an intermediate edit, if one is free beyond the reserve and the finals still due."""
        if self._finals_waiting or self.available <= self.reserve + self.open_messages:
            self.refused_intermediate += 1
            return False
        self._spent.append(self._clock())
        self.granted_intermediate += 1
        return True

    async def acquire(self) -> None:
        """Wait for a token for a final edit (finals are served one at a time, first come first served)."""
        self._finals_waiting += 1
        try:
            async with self._lock:
                # Tokens come back with time, not with an event: sleep until the oldest one expires.
                while self.available <= 0:
                    wait = self.paused_for() or self._spent[0] + self.window - self._clock()
                    await asyncio.sleep(max(0.01, wait))
                self._spent.append(self._clock())
                self.granted_final += 1
        finally:
            self._finals_waiting -= 1
