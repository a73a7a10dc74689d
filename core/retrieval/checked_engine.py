"""A model's evidence verdict checked against the deterministic key-term check: a small judge is not trusted alone.

Small models call a half-covered question "sufficient". Every "sufficient" of the wrapped engine's assessor
is checked: a part whose key terms (its entities, the kind of quantity it asks for) appear nowhere in the
evidence is not covered, whatever the model said. Then the verdict becomes not sufficient, with that part
as the gap and as the next query, and is marked ``overruled`` (the trace and `kb eval` count how often the
two disagree). Every other role is the wrapped engine's own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from core.messages import text
from core.models import AnswerRequest, Assessment, Completion, Hit, Turn, Usage
from core.ports import Engine, KeyTermCheck
from core.text import detect_language, normalize_query


def gap_text(parts: Sequence[str], lang: str) -> str:
    """The gap named for the parts the check found unsupported."""
    return text("gap.separator", lang).join(text("gap.unsupported_part", lang, part=part) for part in parts)


class CheckedEngine:
    """Engine whose assessor's "sufficient" must also pass a KeyTermCheck (see the module docstring)."""

    def __init__(self, engine: Engine, check: KeyTermCheck) -> None:
        self._engine = engine
        self._check = check

    @property
    def name(self) -> str:
        """The wrapped engine's name."""
        return self._engine.name

    async def rewrite(self, history: Sequence[Turn], question: str) -> tuple[str, Usage]:
        return await self._engine.rewrite(history, question)

    async def assess(
        self, question: str, evidence: Sequence[Hit], searched: Sequence[str]
    ) -> tuple[Assessment, Usage]:
        verdict, usage = await self._engine.assess(question, evidence, searched)
        if not verdict.sufficient or not evidence:
            return verdict, usage
        parts = await self._check.unsupported_parts(question, evidence)
        if not parts:
            return verdict, usage
        done = {normalize_query(query) for query in searched}
        queries = tuple(part for part in parts if normalize_query(part) not in done)
        missing = gap_text(parts, detect_language(question))
        return Assessment(sufficient=False, missing=missing, queries=queries, overruled=True), usage

    async def summarise(self, previous: str, turns: Sequence[Turn], *, max_tokens: int) -> tuple[str, Usage]:
        return await self._engine.summarise(previous, turns, max_tokens=max_tokens)

    async def vote_multihop(self, question: str) -> tuple[bool, Usage]:
        return await self._engine.vote_multihop(question)

    def answer(self, request: AnswerRequest) -> AsyncIterator[str | Completion]:
        return self._engine.answer(request)
