"""The model engine, measured: every role call counted by role and status, and the answer's first token timed.

A decorator over the Engine port (`kb serve` wraps its model engine with it), so neither the pipeline nor
the model client knows about metrics. Status is "ok", the domain error's code (model_unavailable,
model_truncated, model_output_invalid, …) or "cancelled".
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Sequence
from typing import Any, TypeVar

from adapters.observability.metrics import MODEL_CALLS, MODEL_FIRST_TOKEN
from core.errors import KbError
from core.models import AnswerRequest, Assessment, Completion, Hit, Turn, Usage
from core.ports import Engine

T = TypeVar("T")


def _status(error: BaseException) -> str:
    """The status label of a failed call."""
    if isinstance(error, asyncio.CancelledError):
        return "cancelled"
    return error.code if isinstance(error, KbError) else "error"


class MeasuredEngine:
    """Engine whose role calls are counted (kb_model_calls_total{role,status}) and whose answers' first
    streamed text is timed (kb_model_first_token_seconds)."""

    def __init__(self, inner: Engine) -> None:
        self._inner = inner

    @property
    def name(self) -> str:
        return self._inner.name

    async def _count(self, role: str, call: Awaitable[T]) -> T:
        try:
            result = await call
        except BaseException as error:
            MODEL_CALLS.labels(role=role, status=_status(error)).inc()
            raise
        MODEL_CALLS.labels(role=role, status="ok").inc()
        return result

    async def rewrite(self, history: Sequence[Turn], question: str) -> tuple[str, Usage]:
        return await self._count("rewrite", self._inner.rewrite(history, question))

    async def assess(
        self, question: str, evidence: Sequence[Hit], searched: Sequence[str]
    ) -> tuple[Assessment, Usage]:
        return await self._count("assess", self._inner.assess(question, evidence, searched))

    async def summarise(self, previous: str, turns: Sequence[Turn], *, max_tokens: int) -> tuple[str, Usage]:
        return await self._count("summary", self._inner.summarise(previous, turns, max_tokens=max_tokens))

    async def vote_multihop(self, question: str) -> tuple[bool, Usage]:
        return await self._count("vote", self._inner.vote_multihop(question))

    async def answer(self, request: AnswerRequest) -> AsyncIterator[str | Completion]:
        started, timed = time.monotonic(), False
        try:
            async for piece in self._inner.answer(request):
                if not timed and isinstance(piece, str) and piece:
                    MODEL_FIRST_TOKEN.observe(time.monotonic() - started)
                    timed = True
                yield piece
        except GeneratorExit:  # the reader stopped early (it had what it needed)
            MODEL_CALLS.labels(role="answer", status="ok").inc()
            raise
        except BaseException as error:
            MODEL_CALLS.labels(role="answer", status=_status(error)).inc()
            raise
        MODEL_CALLS.labels(role="answer", status="ok").inc()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
