"""Bookkeeping of one question while it is answered: usage, model calls, timings and record details."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from core.models import Usage


@dataclass
class RunLedger:
    """Mutable per-question tally, written into the record's details at the end."""

    lang: str
    started: float = field(default_factory=time.monotonic)
    usage: Usage = field(default_factory=Usage)
    model_calls: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)  # JSON: becomes the record's details

    def lap(self, name: str, since: float) -> float:
        """Record the seconds since `since` under name; returns now."""
        now = time.monotonic()
        self.timings[name] = round(now - since, 4)
        return now

    def charge(self, usage: Usage, calls: int = 1) -> None:
        """Add one or more model calls and their usage."""
        self.usage += usage
        self.model_calls += calls
