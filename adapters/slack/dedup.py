"""A bounded, expiring set of recently seen keys (event ids, message keys) for in-memory deduplication."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

DEFAULT_TTL = 3600.0  # Slack retries an event for about 6 minutes; keep keys well beyond that
DEFAULT_MAX_KEYS = 20000


class RecentKeys:
    """claim(key) is True only the first time a key is seen within the TTL."""

    def __init__(
        self,
        *,
        ttl: float = DEFAULT_TTL,
        max_keys: int = DEFAULT_MAX_KEYS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl = ttl
        self.max_keys = max_keys
        self._clock = clock
        self._seen: OrderedDict[str, float] = OrderedDict()

    def _expire(self, now: float) -> None:
        while self._seen:
            _, seen_at = next(iter(self._seen.items()))
            if now - seen_at < self.ttl:
                break
            self._seen.popitem(last=False)

    def claim(self, key: str) -> bool:
        """Record key; True if it was not seen recently (the caller should act), False for a repeat."""
        now = self._clock()
        self._expire(now)
        if key in self._seen:
            return False
        self._seen[key] = now
        while len(self._seen) > self.max_keys:
            self._seen.popitem(last=False)
        return True

    def __contains__(self, key: object) -> bool:
        return key in self._seen
