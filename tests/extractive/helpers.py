"""Small builders shared by the extractive engine tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

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
