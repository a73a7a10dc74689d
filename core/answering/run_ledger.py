"""Bookkeeping of one question while it is answered: usage, model calls, timings and what it found."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from core.models import ContextStats, Usage
from core.record import Phase, PhaseTimings, RecordDetails
from core.trace import RetrievalTrace

log = logging.getLogger(__name__)


@dataclass
class RunLedger:
    """Mutable per-question tally, written into the record's details at the end (details())."""

    lang: str
    started: float = field(default_factory=time.monotonic)
    usage: Usage = field(default_factory=Usage)
    model_calls: int = 0
    timings: PhaseTimings = field(default_factory=PhaseTimings)
    context: ContextStats | None = None
    trace: RetrievalTrace | None = None
    rewrite_error: str = ""
    rewrite_engine: str = ""
    answer_error: str = ""

    def lap(self, phase: Phase, since: float) -> float:
        """Record the seconds since `since` as the phase's time, and log it (phase, duration); returns now."""
        now = time.monotonic()
        seconds = round(now - since, 4)
        self.timings = self.timings.with_phase(phase, seconds)
        log.info("phase %s took %.3f s", phase, seconds, extra={"phase": phase, "duration": seconds})
        return now

    def charge(self, usage: Usage, calls: int = 1) -> None:
        """Add one or more model calls and their usage."""
        self.usage += usage
        self.model_calls += calls

    def details(self) -> RecordDetails:
        """What the question found so far: language, context, rewrite, trace, answer error and timings."""
        return RecordDetails(
            lang=self.lang,
            context=self.context,
            rewrite_error=self.rewrite_error,
            rewrite_engine=self.rewrite_engine,
            trace=self.trace,
            answer_error=self.answer_error,
            timings=self.timings,
        )
