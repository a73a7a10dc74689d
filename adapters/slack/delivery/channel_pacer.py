"""Pacing of new messages per channel: Slack allows about one chat.postMessage per second per channel,
with short bursts, and answers 429 with Retry-After beyond that.

Each channel is a first-come-first-served queue: a post waits for its turn, then for a token of the
channel's bucket (`burst` tokens, refilled at `rate` per second), then goes out while the caller holds the
turn, so posts leave in arrival order and one at a time per channel. A 429's Retry-After pauses the channel
for everyone queued on it. Channels do not wait for each other. slack_sdk only retries a 429 inside one
call (sleeping in the dark); this queue is what keeps a burst of questions in one channel in order.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

DEFAULT_RATE = 1.0
DEFAULT_BURST = 2
MAX_IDLE_CHANNELS = 1000


@dataclass
class _Channel:
    """One channel's queue, token bucket and pause."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    tokens: float = 0.0
    at: float = 0.0
    paused_until: float = 0.0
    users: int = 0


class ChannelPacer:
    """Per-channel FIFO turns for posting, within a token bucket, honouring Retry-After."""

    def __init__(
        self,
        *,
        rate: float = DEFAULT_RATE,
        burst: int = DEFAULT_BURST,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate = max(0.01, rate)
        self.burst = max(1, burst)
        self._clock = clock
        self._channels: dict[str, _Channel] = {}
        self.waited = 0.0  # seconds spent waiting for tokens or pauses, over all posts

    def waiting(self, channel: str) -> int:
        """Posts queued or going out in this channel right now."""
        state = self._channels.get(channel)
        return state.users if state else 0

    def pause(self, channel: str, seconds: float) -> None:
        """Slack said Retry-After: no post in this channel for `seconds`."""
        state = self._channels.get(channel)
        if state is not None:
            state.paused_until = max(state.paused_until, self._clock() + seconds)
            state.tokens = 0.0

    def _delay(self, state: _Channel) -> float:
        now = self._clock()
        state.tokens = min(float(self.burst), state.tokens + (now - state.at) * self.rate)
        state.at = now
        if now < state.paused_until:
            return state.paused_until - now
        return 0.0 if state.tokens >= 1 else (1 - state.tokens) / self.rate

    @asynccontextmanager
    async def turn(self, channel: str) -> AsyncIterator[None]:
        """Wait for this channel's next turn and a token; the post happens inside the block."""
        state = self._channels.get(channel)
        if state is None:
            self._forget_idle()
            state = self._channels[channel] = _Channel(tokens=float(self.burst), at=self._clock())
        state.users += 1
        try:
            async with state.lock:
                while (delay := self._delay(state)) > 0:
                    self.waited += delay
                    await asyncio.sleep(delay)
                state.tokens -= 1
                yield
        finally:
            state.users -= 1

    def _forget_idle(self) -> None:
        """Drop channels with nobody queued whose bucket is full again (they would start full anyway)."""
        if len(self._channels) < MAX_IDLE_CHANNELS:
            return
        for name, state in list(self._channels.items()):
            if not state.users and self._delay(state) == 0 and state.tokens >= self.burst:
                del self._channels[name]
