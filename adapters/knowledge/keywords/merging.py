"""Which keyword segments to merge: a pure decision over their sizes (a tiered policy, as Lucene's).

Segments fall in tiers by size (each tier MERGE_FACTOR times the one below, from SMALLEST up); when a
tier holds MERGE_FACTOR segments they become one of the next tier. Each chunk is so rewritten about
once per tier, log(store / change) times over its life, and adding a batch costs in proportion to
the batch, not to the store. A segment whose removed rows reach PURGE_SHARE is rewritten alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

MERGE_FACTOR = 4
SMALLEST = 1024  # segments up to this many rows share the lowest tier
PURGE_SHARE = 0.3


@dataclass(frozen=True, slots=True)
class SegmentSize:
    """A segment's name, its rows and how many of them are removed."""

    name: str
    rows: int
    removed: int = 0

    @property
    def live(self) -> int:
        return self.rows - self.removed


def tier(rows: int) -> int:
    """0 up to SMALLEST rows, then one more per MERGE_FACTOR times as many."""
    return int(math.log(max(rows, SMALLEST) / SMALLEST, MERGE_FACTOR) + 1e-9)


def merges_due(sizes: Sequence[SegmentSize]) -> list[list[str]]:
    """Groups of segment names to merge now (each group becomes one segment); empty when none is due."""
    groups: list[list[str]] = []
    taken: set[str] = set()
    for size in sizes:
        if size.rows and size.removed / size.rows >= PURGE_SHARE:
            groups.append([size.name])
            taken.add(size.name)
    tiers: dict[int, list[str]] = {}
    for size in sizes:
        if size.name not in taken:
            tiers.setdefault(tier(size.live), []).append(size.name)
    groups.extend(names for _, names in sorted(tiers.items()) if len(names) >= MERGE_FACTOR)
    return groups
