"""Port decorators for `kb eval`: see every search a question makes and count the engine's calls by role.

They wrap the real knowledge base and engine (the same composition root as `kb ask` builds), add nothing
to what the pipeline does, and are reset before each evaluated question.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Sequence
from typing import Any

from core.models import AnswerRequest, Assessment, Completion, Hit, SearchRequest, Turn, Usage
from core.ports import Engine


class RecordingKnowledgeBase:
    """KnowledgeBase that remembers every hit of every search since the last reset (other calls pass through)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.searches: list[tuple[SearchRequest, list[Hit]]] = []
        self.hits: dict[str, Hit] = {}

    def reset(self) -> None:
        """Forget the previous question's searches."""
        self.searches = []
        self.hits = {}

    async def search(self, request: SearchRequest) -> list[Hit]:
        hits: list[Hit] = await self._inner.search(request)
        self.searches.append((request, list(hits)))
        for hit in hits:
            self.hits.setdefault(hit.id, hit)
        return hits

    async def referenced(
        self, evidence: Sequence[Hit], *, query: str, datasets: Sequence[str], limit: int
    ) -> list[Hit]:
        """The paragraphs evidence refers to, remembered like search hits (they reach the loop as candidates)."""
        hits: list[Hit] = await self._inner.referenced(evidence, query=query, datasets=datasets, limit=limit)
        for hit in hits:
            self.hits.setdefault(hit.id, hit)
        return hits

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class CountingEngine:
    """Engine that counts calls per role (rewrite, assess, summary, vote, answer) and keeps the verdicts."""

    def __init__(self, inner: Engine) -> None:
        self._inner = inner
        self.calls: Counter[str] = Counter()
        self.assessments: list[Assessment] = []

    def reset(self) -> None:
        """Start counting the next question."""
        self.calls = Counter()
        self.assessments = []

    @property
    def name(self) -> str:
        return self._inner.name

    async def rewrite(self, history: Sequence[Turn], question: str) -> tuple[str, Usage]:
        self.calls["rewrite"] += 1
        return await self._inner.rewrite(history, question)

    async def assess(
        self, question: str, evidence: Sequence[Hit], searched: Sequence[str]
    ) -> tuple[Assessment, Usage]:
        self.calls["assess"] += 1
        verdict, usage = await self._inner.assess(question, evidence, searched)
        self.assessments.append(verdict)
        return verdict, usage

    async def summarise(self, previous: str, turns: Sequence[Turn], *, max_tokens: int) -> tuple[str, Usage]:
        self.calls["summary"] += 1
        return await self._inner.summarise(previous, turns, max_tokens=max_tokens)

    async def vote_multihop(self, question: str) -> tuple[bool, Usage]:
        self.calls["vote"] += 1
        return await self._inner.vote_multihop(question)

    async def answer(self, request: AnswerRequest) -> AsyncIterator[str | Completion]:
        self.calls["answer"] += 1
        async for piece in self._inner.answer(request):
            yield piece

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
