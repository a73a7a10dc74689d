"""ExtractiveEngine: every model role (rewrite, assess, summarise, vote, answer) with no language model.

The roles are deterministic text processing; jieba work runs in worker threads so the event loop stays
free. Usage is always zero. The engine never fails for lack of a model, which makes it the default when no
endpoint is configured and the fallback when the configured model is down. With an embedder (the offline
sentence encoder) the assessor and the answer also judge support by meaning (language/semantic.py); the
sentence vectors are cached, so the loop's rounds embed each sentence once.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence

import numpy as np

from adapters.extractive.answer import answer_pieces
from adapters.extractive.judging.assess import DEFAULT_COVERAGE_THRESHOLD, assess_evidence
from adapters.extractive.judging.key_terms import parts_missing_key_terms
from adapters.extractive.language.semantic import Similarities
from adapters.extractive.language.sentences import Sentence, split_sentences
from adapters.extractive.left_out import left_out_quotes
from adapters.extractive.question.parts import question_parts, split_question
from adapters.extractive.rewrite import rewrite_question
from adapters.extractive.summary import summarise_turns
from core.errors import ModelOutputInvalid
from core.models import AnswerRequest, Assessment, Completion, Hit, Turn, Usage
from core.ports import Embedder
from core.record import SuppliedQuote
from core.retrieval.complexity import extract_features, rule_score

MULTIHOP_RULE_THRESHOLD = 0.4  # the rule score's fallback threshold (docs/design.md#routing-tiers)
VECTOR_CACHE = 20000  # sentence vectors kept (about 40 MB at 512 floats)


class ExtractiveEngine:
    """The Engine port implemented extractively (see the package docstring)."""

    def __init__(
        self, *, coverage_threshold: float = DEFAULT_COVERAGE_THRESHOLD, embedder: Embedder | None = None
    ) -> None:
        if not 0.0 < coverage_threshold <= 1.0:
            raise ValueError(f"coverage_threshold must be in (0, 1], got {coverage_threshold}")
        self._threshold = coverage_threshold
        self._embedder = embedder
        self._vectors: OrderedDict[str, np.ndarray] = OrderedDict()

    async def _embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of the texts, from the cache where possible."""
        assert self._embedder is not None
        missing = [text for text in dict.fromkeys(texts) if text not in self._vectors]
        if missing:
            vectors = await self._embedder.embed_documents(missing)
            for text, vector in zip(missing, vectors, strict=True):
                array = np.asarray(vector, dtype=np.float32)
                norm = float(np.linalg.norm(array))
                self._vectors[text] = array / norm if norm > 0 else array
            while len(self._vectors) > VECTOR_CACHE:
                self._vectors.popitem(last=False)
        for text in texts:
            self._vectors.move_to_end(text)
        return np.stack([self._vectors[text] for text in texts])

    async def _meaning(self, question: str, evidence: Sequence[Hit]) -> Similarities | None:
        """Similarity of each question part to each evidence sentence; None without an embedder."""
        if self._embedder is None or not evidence:
            return None
        parts, found = await asyncio.to_thread(_parts_and_sentences, question, tuple(evidence))
        if not parts or not found:
            return None
        part_vectors = await self._embed(parts)
        sentence_vectors = await self._embed([s.text for s in found])
        scores = np.round(part_vectors @ sentence_vectors.T, 4)
        return Similarities(tuple(parts), tuple(found), tuple(tuple(map(float, row)) for row in scores))

    @property
    def name(self) -> str:
        """Recorded on every record this engine answers."""
        return "extractive"

    @property
    def coverage_threshold(self) -> float:
        """Share of a part's salient terms the evidence must contain for the part to count as covered."""
        return self._threshold

    async def rewrite(self, history: Sequence[Turn], question: str) -> tuple[str, Usage]:
        """The follow-up with the previous turn's subject attached; self-contained questions unchanged."""
        if not history:
            return question, Usage()
        return await asyncio.to_thread(rewrite_question, tuple(history), question), Usage()

    async def assess(
        self, question: str, evidence: Sequence[Hit], searched: Sequence[str]
    ) -> tuple[Assessment, Usage]:
        """Part-by-part term coverage; gap and bridge queries never repeat a searched one."""
        meaning = await self._meaning(question, evidence)
        verdict = await asyncio.to_thread(
            assess_evidence,
            question,
            tuple(evidence),
            tuple(searched),
            threshold=self._threshold,
            meaning=meaning,
        )
        return verdict, Usage()

    async def unsupported_parts(self, question: str, evidence: Sequence[Hit]) -> list[str]:
        """The parts whose key terms (entities, an asked quantity) the evidence lacks (judging/key_terms.py)."""
        return await asyncio.to_thread(parts_missing_key_terms, question, tuple(evidence))

    async def left_out(self, request: AnswerRequest, cited: Sequence[int]) -> tuple[SuppliedQuote, ...]:
        """The covered parts a model's answer cites no supporting paragraph of, quoted (left_out.py)."""
        question = request.standalone or request.question
        meaning = await self._meaning(question, request.evidence)
        return await asyncio.to_thread(
            left_out_quotes, request, tuple(cited), threshold=self._threshold, meaning=meaning
        )

    async def summarise(self, previous: str, turns: Sequence[Turn], *, max_tokens: int) -> tuple[str, Usage]:
        """Questions and fact-bearing answer sentences merged into the previous summary, within budget."""
        summary = await asyncio.to_thread(summarise_turns, previous, tuple(turns), max_tokens=max_tokens)
        if not summary.strip():
            raise ModelOutputInvalid("extractive summary is empty: nothing to summarise")
        return summary, Usage()

    async def vote_multihop(self, question: str) -> tuple[bool, Usage]:
        """Multi-hop when the rule score is at least 0.4 (the routing fallback) or the question has parts."""
        return await asyncio.to_thread(rule_vote, question), Usage()

    async def answer(self, request: AnswerRequest) -> AsyncIterator[str | Completion]:
        """Stream the extractive answer piece by piece, then one Completion with the full text."""
        meaning = await self._meaning(request.standalone or request.question, request.evidence)
        pieces = await asyncio.to_thread(answer_pieces, request, threshold=self._threshold, meaning=meaning)
        for piece in pieces:
            yield piece
            await asyncio.sleep(0)
        yield Completion(text="".join(pieces), finish_reason="stop", usage=Usage(), model=self.name)


def _parts_and_sentences(question: str, evidence: tuple[Hit, ...]) -> tuple[list[str], list[Sentence]]:
    return question_parts(question), split_sentences(evidence)


def rule_vote(question: str) -> bool:
    """Rule features alone: core.retrieval.complexity's score >= 0.4, or a compound question (one lookup per part).

    The structural split is part of the vote because the weighted score alone rates a plain compound
    question ("年假有几天，以及报销的截止期限是多久？" scores about 0.16) as single-hop, although its parts
    live in different documents and need a retrieval each.
    """
    if rule_score(extract_features(question)) >= MULTIHOP_RULE_THRESHOLD:
        return True
    return len(split_question(question)) > 1
