"""Durations and points in time as the commands take them: "90s", "30m", "6h", "7d", or a date."""

from __future__ import annotations

import datetime as dt
import re

from core.errors import InvalidInput
from core.messages import phrase

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhd]?)$")
_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def seconds_of(text: str) -> float | None:
    """Seconds in "90s", "30m", "6h", "1d" or a plain number of seconds; None when it is not a duration."""
    match = _DURATION.match(text.strip().lower())
    return None if match is None else float(match.group(1)) * _UNITS[match.group(2)]


def parse_since(text: str, now: float) -> float:
    """Epoch seconds from a duration back from now ("7d") or a date ("2026-12-01", local midnight)."""
    seconds = seconds_of(text)
    if seconds is not None:
        return now - seconds
    try:
        return dt.datetime.fromisoformat(text.strip()).timestamp()
    except ValueError as error:
        raise InvalidInput(phrase("error.gaps_since")) from error
