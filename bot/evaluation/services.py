"""The bot's services with the knowledge base and the engine observed, as `kb eval` and the benchmarks run them."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from bot.compose import build_services
from bot.evaluation.observers import CountingEngine, RecordingKnowledgeBase
from bot.settings import Settings


@contextlib.asynccontextmanager
async def observed_services(
    settings: Settings,
) -> AsyncIterator[tuple[Any, RecordingKnowledgeBase, CountingEngine]]:
    """build_services(settings), its knowledge base recording searches and its engine counting calls."""
    observed: dict[str, Any] = {}

    def wrap_kb(kb: Any) -> Any:
        observed["kb"] = RecordingKnowledgeBase(kb)
        return observed["kb"]

    def wrap_engine(engine: Any) -> Any:
        observed["engine"] = CountingEngine(engine)
        return observed["engine"]

    async with build_services(settings, wrap_kb=wrap_kb, wrap_engine=wrap_engine) as services:
        yield services, observed["kb"], observed["engine"]
