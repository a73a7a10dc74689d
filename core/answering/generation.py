"""Writing the answer: stream the engine's answer, and fall back to another engine when the model fails or
answers with citation markers only."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from core.answering.answer import says_nothing, without_prompt_tags
from core.answering.run_ledger import RunLedger
from core.errors import AnswerWithoutContent, ModelError, ModelOutputInvalid, ModelRejected
from core.events import AnswerDelta, Notice, Progress
from core.messages import text
from core.models import AnswerRequest, Completion, Usage
from core.ports import Engine

log = logging.getLogger(__name__)

Emit = Callable[[Progress], Awaitable[None]]


class AnswerWriter:
    """Streams the answer from the engine; on a model failure, answers with the fallback and a notice."""

    def __init__(
        self, engine: Engine, *, fallback: Engine | None = None, allow_fallback: bool = True
    ) -> None:
        self._engine = engine
        self._fallback = fallback if allow_fallback else None

    async def write(self, request: AnswerRequest, ledger: RunLedger, emit: Emit) -> tuple[str, str]:
        """The answer text and the name of the engine that wrote it."""
        try:
            return await self._stream(self._engine, request, ledger, emit), self._engine.name
        except ModelError as exc:
            if self._fallback is None:
                raise
            log.warning("answer model failed (%s); answering with %s", exc, self._fallback.name)
            ledger.answer_error = f"{exc.code}: {exc}"
            if isinstance(exc, ModelRejected):
                degraded = text("answer.degraded_rejected", ledger.lang, status=exc.status_label)
            elif isinstance(exc, AnswerWithoutContent):
                degraded = text("answer.degraded_empty", ledger.lang)
            else:
                degraded = text("answer.degraded", ledger.lang)
            await emit(Notice(text=degraded, kind="degraded"))
            body = await self._stream(self._fallback, request, ledger, emit)
            return f"{degraded}\n\n{body}", f"{self._fallback.name} (fallback)"

    @staticmethod
    async def _stream(engine: Engine, request: AnswerRequest, ledger: RunLedger, emit: Emit) -> str:
        parts: list[str] = []
        final: Completion | None = None
        async for item in engine.answer(request):
            if isinstance(item, Completion):
                final = item
            elif item:
                parts.append(item)
                await emit(AnswerDelta(text=item))
        if final is None:
            ledger.charge(Usage())
            raise ModelOutputInvalid("the answer stream ended without a final result")
        ledger.charge(final.usage)
        body = final.text or "".join(parts)
        if not engine.name.startswith("extractive"):  # quotes are the documents' own text, tags and all
            body = without_prompt_tags(body)
        if not body.strip():
            raise ModelOutputInvalid("empty answer")
        if says_nothing(body):  # "[1]": nothing a reader can use, and nothing to check against the sources
            raise AnswerWithoutContent(f"the answer was {body.strip()[:80]!r}")
        if final.finish_reason in ("length", "repetition"):  # cut by the token cap, or a loop stopped
            body = f"{body.rstrip()}\n{text('answer.truncated', ledger.lang)}"
        return body
