"""The schedule's decisions (core.sources.schedule) and the claimed sync (core.sources.sync.claimed_sync) with
in-memory fakes: what is due, how long to wait, one sync per source, a cancelled sync releases its claim."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping

import pytest

from core.sources.models import SourceSpec, SourceState, SyncReport
from core.sources.schedule import due_sources, seconds_until_next
from core.sources.sync import claimed_sync


def _state(name: str, every: float, last_started: float | None) -> SourceState:
    last = None if last_started is None else SyncReport(name, last_started)
    return SourceState(SourceSpec(name, "slack-channel", "d", {"channel": "C1"}, every), {}, last)


def test_due_sources_are_the_scheduled_ones_whose_time_has_come_longest_overdue_first() -> None:
    """Never synced: due at once; synced: due `every` after the last start; by hand: never."""
    states = [
        _state("hand", 0, None),
        _state("new", 3600, None),
        _state("old", 3600, 100.0),
        _state("recent", 3600, 3000.0),
    ]
    assert [s.spec.name for s in due_sources(states, now=3700.0)] == ["new", "old"]
    assert seconds_until_next([_state("recent", 3600, 3000.0)], now=3700.0, idle=600.0) == 600.0
    assert seconds_until_next([_state("recent", 3600, 3000.0)], now=6500.0, idle=600.0) == 100.0
    assert seconds_until_next([_state("hand", 0, None)], now=0.0, idle=60.0) == 60.0


class Registry:
    """A one-process registry: claims and finished reports."""

    def __init__(self) -> None:
        self.owner = ""
        self.finished: list[tuple[str, SyncReport, Mapping[str, str] | None]] = []

    async def claim_sync(self, name: str, owner: str, *, now: float, lease: float) -> bool:
        if self.owner and self.owner != owner:
            return False
        self.owner = owner
        return True

    async def finish_sync(
        self, name: str, owner: str, report: SyncReport, versions: Mapping[str, str] | None
    ) -> None:
        self.finished.append((owner, report, versions))
        self.owner = ""


@contextlib.asynccontextmanager
async def _held(dataset: str) -> AsyncIterator[object]:
    yield dataset


async def test_a_claimed_sync_records_its_report_and_a_second_owner_waits_its_turn() -> None:
    """The holder's report and versions are recorded; another owner asking meanwhile gets None."""
    registry, started, release = Registry(), asyncio.Event(), asyncio.Event()
    state = _state("s", 60, None)

    async def run(chosen: SourceState) -> tuple[SyncReport, dict[str, str] | None]:
        started.set()
        await release.wait()
        return SyncReport("s", 1.0, added=1), {"k": "v"}

    first = asyncio.create_task(claimed_sync(state, registry, owner="a", hold=_held, run=run, lease=60))  # type: ignore[arg-type]
    await started.wait()
    assert await claimed_sync(state, registry, owner="b", hold=_held, run=run, lease=60) is None  # type: ignore[arg-type]
    release.set()
    report = await first
    assert report is not None and report.added == 1
    assert registry.finished == [("a", report, {"k": "v"})] and registry.owner == ""


async def test_a_cancelled_sync_is_recorded_failed_and_releases_its_claim() -> None:
    """Stopping `kb serve` mid-sync leaves no claim behind and no new versions."""
    registry, started = Registry(), asyncio.Event()

    async def run(chosen: SourceState) -> tuple[SyncReport, dict[str, str] | None]:
        started.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    task = asyncio.create_task(
        claimed_sync(_state("s", 60, None), registry, owner="a", hold=_held, run=run, lease=60)
    )  # type: ignore[arg-type]
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    [(owner, report, versions)] = registry.finished
    assert (owner, versions, registry.owner) == ("a", None, "") and "interrupted" in report.error
