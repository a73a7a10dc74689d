"""How well each evidence sentence answers a question part: meaning, rare shared words, the asked quantity, rank.

A sentence's score adds

* its similarity in meaning to the part (the offline encoder, language/semantic.py; 0 without one),
* ``TERMS_WEIGHT`` times the share of the part's words it contains, each word weighted by how rare it is
  among the evidence sentences (its paragraph's document name and heading count ``CONTEXT_SHARE``),
* ``QUANTITY_WEIGHT`` when the part asks for a quantity and the sentence states one of that kind,
* when the part asks for a limit ("最长…多久", "at most"), the stated limit of that direction ("不得超过")
  counted as one more of the part's words, weighted by its rarity like the others,
* ``RANK_WEIGHT / sqrt(rank)`` of its paragraph in the reranked evidence.

A sentence that is itself a question (a Slack thread's opening post, a FAQ's heading line) answers
nothing: it is scored only when no other sentence is.

Words alone pick the sentence that repeats the question ("…申请仲裁…") over the one that answers it in
other words ("劳动争议申请仲裁的时效期间为一年"); meaning alone misses rare exact names. The weights were set
on the team's law set and CMRC and checked on HotpotQA and the validation sets (docs/design.md#the-extractive-answer).
Pure: the caller supplies the similarities.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from adapters.extractive.language.quantities import (
    answers_asked_quantity,
    asked_bound,
    asked_units,
    states_bound,
)
from adapters.extractive.language.semantic import Similarities
from adapters.extractive.language.sentences import Sentence
from adapters.extractive.language.terms import Haystack, terms
from core.models import Hit

TERMS_WEIGHT = 0.5
QUANTITY_WEIGHT = 0.2
RANK_WEIGHT = 0.1
CONTEXT_SHARE = 0.5


@dataclass(frozen=True, slots=True)
class Scored:
    """A sentence with its score, its similarity in meaning to the part and the share of the part's word
    weight it matched (itself or around it)."""

    score: float
    similarity: float
    words: float
    sentence: Sentence


@dataclass(frozen=True, slots=True)
class SentenceIndex:
    """The evidence's sentences with what scoring needs of them, built once per answer."""

    sentences: tuple[Sentence, ...]
    stacks: tuple[Haystack, ...]
    context: tuple[Haystack, ...]  # per paragraph: document name and heading

    @classmethod
    def of(cls, evidence: Sequence[Hit], sentences: Sequence[Sentence]) -> SentenceIndex:
        """Index the sentences of this evidence."""
        return cls(
            tuple(sentences),
            tuple(Haystack.of(s.text) for s in sentences),
            tuple(Haystack.of(f"{hit.document_name}\n{hit.heading}") for hit in evidence),
        )

    def idf(self, words: Sequence[str]) -> dict[str, float]:
        """Each word's weight: log(1 + sentences / (1 + sentences containing it))."""
        count = len(self.sentences)
        return {w: math.log(1 + count / (1 + sum(s.contains(w) for s in self.stacks))) for w in words}


def score_sentences(
    part: str,
    index: SentenceIndex,
    meaning: Similarities | None,
    *,
    among: Sequence[Sentence] | None = None,
    also: Sequence[str] = (),
) -> list[Scored]:
    """The sentences (all, or those ``among``) that share a word with the part (or ``also``: words it carries
    from an earlier part's answer, question/chain.py) or are close in meaning to it, best first (ties in
    evidence order)."""
    wanted = list(dict.fromkeys([*terms(part), *also]))  # deduplicated, in order
    weights = index.idf(wanted)
    bound = asked_bound(part)
    bounded = [bound is not None and states_bound(s.text, bound) for s in index.sentences]
    bound_weight = math.log(1 + len(bounded) / (1 + sum(bounded))) if bound is not None else 0.0
    total = sum(weights.values()) + bound_weight
    similar = {sentence: score for score, sentence in meaning.ranked(part)} if meaning is not None else {}
    quantity = asked_units(part) is not None
    allowed = set(among) if among is not None else None
    scored: list[Scored] = []
    for position, sentence in enumerate(index.sentences):
        if allowed is not None and sentence not in allowed:
            continue
        own = set(index.stacks[position].matched(wanted))
        around = set(index.context[sentence.source - 1].matched(wanted)) - own
        stated = bound_weight if bounded[position] else 0.0
        words = (
            (sum(weights[w] for w in own) + CONTEXT_SHARE * sum(weights[w] for w in around) + stated) / total
            if total
            else 0.0
        )
        if not own and sentence not in similar:
            continue
        similarity = similar.get(sentence, 0.0)
        score = similarity + TERMS_WEIGHT * words + RANK_WEIGHT / math.sqrt(sentence.source)
        if quantity and answers_asked_quantity(part, sentence.text):
            score += QUANTITY_WEIGHT
        scored.append(Scored(round(score, 6), similarity, words, sentence))
    statements = [item for item in scored if not asks(item.sentence.text)]
    scored = statements or scored
    scored.sort(key=lambda item: (-item.score, item.sentence.source, item.sentence.position))
    return scored


QUESTION_MARKS = ("?", "？")
_TRAILING = " \t\n*_"  # spaces and Markdown emphasis; a closing quote means the question is quoted
_PAIRS = (("“", "”"), ("「", "」"), ("『", "』"), ("《", "》"), ("(", ")"), ("（", "）"))


def asks(sentence: str) -> bool:
    """True for a sentence that is a question: it ends with a question mark that no quotation holds — a
    quoted question (…a parody of "Who's Afraid of Virginia Woolf?") or a split inside a quoted title
    ("Who's Afraid of Virginia Woolf?) is no question."""
    if not sentence.rstrip(_TRAILING).endswith(QUESTION_MARKS):
        return False
    balanced = sentence.count('"') % 2 == 0
    return balanced and all(sentence.count(left) == sentence.count(right) for left, right in _PAIRS)
