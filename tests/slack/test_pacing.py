"""Per-channel pacing of posts: arrival order, a burst then the rate, channels independent, Retry-After."""

from __future__ import annotations

import asyncio
import time

from adapters.slack.delivery.channel_pacer import ChannelPacer


async def _post(pacer: ChannelPacer, channel: str, name: str, log: list[tuple[str, float]]) -> None:
    async with pacer.turn(channel):
        log.append((name, time.monotonic()))


async def test_posts_in_one_channel_leave_in_arrival_order_at_the_rate_after_a_burst() -> None:
    """Eight posts at once: the first two at once (the burst), then the rate: post k never before
    (k + 1 - burst) / rate seconds, and all in arrival order."""
    pacer, log = ChannelPacer(rate=20.0, burst=2), []
    started = time.monotonic()
    await asyncio.gather(*(_post(pacer, "C1", f"p{i}", log) for i in range(8)))
    assert [name for name, _ in log] == [f"p{i}" for i in range(8)]
    offsets = [at - started for _, at in log]
    assert offsets[1] < 0.03
    assert all(offset >= (k + 1 - 2) / 20.0 - 0.002 for k, offset in enumerate(offsets))
    assert offsets[-1] < 6 / 20.0 + 0.1


async def test_channels_do_not_wait_for_each_other() -> None:
    """A queue in one channel does not delay the first post of another."""
    pacer, log = ChannelPacer(rate=5.0, burst=1), []
    started = time.monotonic()
    await asyncio.gather(
        *(_post(pacer, "BUSY", f"busy{i}", log) for i in range(3)), _post(pacer, "QUIET", "quiet", log)
    )
    quiet = dict(log)["quiet"] - started
    assert quiet < 0.05 and dict(log)["busy2"] - started >= 0.35


async def test_a_retry_after_pauses_everyone_queued_on_the_channel() -> None:
    """After pause(0.3), the channel's next post waits at least 0.3 s even with tokens to spare."""
    pacer, log = ChannelPacer(rate=100.0, burst=5), []
    async with pacer.turn("C1"):
        pacer.pause("C1", 0.3)
        paused_at = time.monotonic()
    await _post(pacer, "C1", "after", log)
    assert log[0][1] - paused_at >= 0.29
