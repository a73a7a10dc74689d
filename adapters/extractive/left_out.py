"""The parts of a question a model's answer left out, quoted from the paragraphs that support them.

A model may answer one part of a compound question and stop (a small model answers the first hop of a
two-hop question and never names the person asked for), or state a part from a paragraph that does not hold
it. Once the answer is attributed (core/answering/attribution.py), the paragraphs it cites say what it
answered from. A part the judge (judging.assess.judge_parts) finds covered, whose answer cites none of the
paragraphs the extractive answer would quote for it (for a part asking through another thing, the linked
paragraph that holds the second fact), is quoted from the paragraphs the answer does not cite, the way the
extractive answer quotes it (docs/design.md#parts-the-answer-left-out). Nothing is composed: only evidence
sentences with their markers. CPU-bound (jieba): call from a worker thread.
"""

from __future__ import annotations

from collections.abc import Sequence

from adapters.extractive.answer import answered_elsewhere, supported_sentences
from adapters.extractive.judging.assess import DEFAULT_COVERAGE_THRESHOLD, judge_parts
from adapters.extractive.judging.bridges import is_bridge_shaped
from adapters.extractive.judging.support import PartSupport
from adapters.extractive.language.semantic import Similarities
from adapters.extractive.language.sentences import Sentence, split_sentences
from adapters.extractive.question.chain import carried_words
from core.models import AnswerRequest
from core.record import SuppliedQuote

QUOTED_PER_PART = 3  # sentences quoted for a part the answer left out


def needed_paragraphs(support: PartSupport, quoted: Sequence[Sentence]) -> frozenset[int]:
    """The paragraphs (1-based) of which the answer must cite one to have answered a covered part: for a part
    that asks through another thing (bridges.is_bridge_shaped), the linked paragraph of its hop (the anchor
    alone holds only the first fact); else any the extractive answer would quote for it."""
    if support.hop is not None and is_bridge_shaped(support.part):
        return frozenset({support.hop + 1})
    return frozenset(sentence.source for sentence in quoted)


def left_out_quotes(
    request: AnswerRequest,
    cited: Sequence[int],
    *,
    threshold: float = DEFAULT_COVERAGE_THRESHOLD,
    meaning: Similarities | None = None,
) -> tuple[SuppliedQuote, ...]:
    """Per covered part whose needed paragraphs the answer cites none of, its best sentences from the
    paragraphs it does not cite (at most ``QUOTED_PER_PART``), in the order of the question's parts."""
    evidence = request.evidence
    if not evidence:
        return ()
    question = request.standalone or request.question
    supports = judge_parts(question, evidence, threshold=threshold, meaning=meaning)
    answered = frozenset(cited)
    candidates = split_sentences(evidence)
    quotes: list[SuppliedQuote] = []
    previous, answered_before = "", list[Sentence]()  # the part before and the sentences quoted for it
    for support in supports:
        also = carried_words(support.part, previous, answered_before)
        previous, answered_before = support.part, []
        if not support.covered or not support.paragraphs:
            continue
        others = answered_elsewhere(supports, support)
        quoted = supported_sentences(support, evidence, candidates, meaning, others=others, also=also)
        answered_before = quoted
        if needed_paragraphs(support, quoted) & answered:
            continue
        chosen = [sentence for sentence in quoted if sentence.source not in answered][:QUOTED_PER_PART]
        quotes.extend(SuppliedQuote(support.part, sentence.text, sentence.source) for sentence in chosen)
    return tuple(quotes)
