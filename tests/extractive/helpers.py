"""Small builders shared by the extractive engine tests."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

from core.models import Completion, Hit


def hit(index: int, content: str, document: str = "doc.md", heading: str = "") -> Hit:
    """A hit with a stable id built from its index."""
    return Hit(
        id=f"h{index}",
        content=content,
        score=1.0,
        dataset="test",
        document_id=document,
        document_name=document,
        heading=heading,
        position=index,
    )


async def collect(stream: AsyncIterator[str | Completion]) -> tuple[list[str], list[Completion]]:
    """Split a stream into its text deltas and its completions."""
    deltas: list[str] = []
    completions: list[Completion] = []
    async for item in stream:
        if isinstance(item, Completion):
            completions.append(item)
        else:
            deltas.append(item)
    return deltas, completions


async def ticks_during(work: Callable[[], Awaitable[object]]) -> tuple[int, float]:
    """How often a 1 ms ticker ran while the work was awaited, and how long the work took."""
    ticks = 0
    stop = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not stop.is_set():
            await asyncio.sleep(0.001)
            ticks += 1

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0.005)
    ticks = 0
    started = time.perf_counter()
    await work()
    elapsed = time.perf_counter() - started
    stop.set()
    await task
    return ticks, elapsed


class MeaningEmbedder:
    """An Embedder whose vectors come from a table (texts it does not know point elsewhere); counts texts."""

    name = "table"
    dimension = 3

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table
        self.embedded: list[str] = []

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.embedded.extend(texts)
        return [self.table.get(text.strip("？?。"), [0.0, 0.0, 1.0]) for text in texts]

    async def embed_query(self, text: str) -> list[float]:
        return (await self.embed_documents([text]))[0]
