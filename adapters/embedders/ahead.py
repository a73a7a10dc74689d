"""Write batches with their vectors asked for one batch ahead: an embedder in a process of its own
(adapters/embedders/local.py) embeds the next batch while Chroma writes this one
(docs/storage.md#ingest-at-the-embedders-speed)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable

import numpy as np


async def embedded_ahead(
    total: int, batch: int, embed: Callable[[int, int], Awaitable[np.ndarray]]
) -> AsyncGenerator[tuple[int, int, np.ndarray], None]:
    """(start, end, vectors) for each batch of range(total), embed(start, end) being already asked for the
    next batch when one is handed out. Use inside contextlib.aclosing: a consumer that stops early cancels
    the embedding ahead."""
    upcoming = asyncio.ensure_future(embed(0, batch)) if total else None
    try:
        for start in range(0, total, batch):
            assert upcoming is not None
            vectors = await upcoming
            end = start + batch
            upcoming = asyncio.ensure_future(embed(end, end + batch)) if end < total else None
            # the next batch's request goes out now, before the caller's write takes the GIL
            await asyncio.sleep(0)
            yield start, end, vectors
    finally:
        if upcoming is not None and not upcoming.cancel() and not upcoming.cancelled():
            upcoming.exception()  # already failed: retrieved, so it is not logged as never retrieved
