"""When scheduled sources are due (pure): a source with a schedule is due once `every` seconds have passed
since its last sync started, or at once when it never ran."""

from __future__ import annotations

from collections.abc import Sequence

from core.sources.models import SourceState

IDLE_CHECK = 60.0  # with nothing due sooner, look again after this long (a source added meanwhile)


def due_at(state: SourceState) -> float | None:
    """When the source should sync next (0: now); None for a source synced only by hand."""
    if state.spec.every <= 0:
        return None
    return 0.0 if state.last is None else state.last.started_at + state.spec.every


def due_sources(states: Sequence[SourceState], now: float) -> list[SourceState]:
    """The scheduled sources due at `now`, the longest overdue first."""
    timed = [(when, state) for state in states if (when := due_at(state)) is not None and when <= now]
    return [state for _, state in sorted(timed, key=lambda item: (item[0], item[1].spec.name))]


def seconds_until_next(states: Sequence[SourceState], now: float, *, idle: float = IDLE_CHECK) -> float:
    """How long to wait before looking again: until the next source is due, at most `idle`."""
    upcoming = [when - now for state in states if (when := due_at(state)) is not None]
    return max(0.0, min([idle, *upcoming]))
