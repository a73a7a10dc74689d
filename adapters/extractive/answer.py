"""The extractive answer: per question part, the sentences of the evidence that answer it, with citations.

The parts and their support come from the same judgement the assessor makes (judging.assess.judge_parts).
A supported part is quoted from the paragraphs that support it — the anchor, the linked paragraph of a
bridge hop, other paragraphs covering the part alone — and from any other paragraph naming its subject
that no other part is answered from, and the article a quoted sentence defers to (deferred.py); sentences
are chosen by how well they answer the part
(language/relevance.py, docs/design.md#the-extractive-answer). A part supported only in degree (nothing
identifiable missing, docs/design.md#the-uncertainty-notice) is quoted from its best paragraph. A part the
evidence does not support shows its closest sentences as unconfirmed when some come close, else says so plainly; nothing is ever
composed beyond the quoted sentences, a label and the part headings. ``[n]`` is the 1-based index of the
paragraph in the request's evidence, as the pipeline numbers its sources. The standalone (rewritten)
question is answered when the request carries one. CPU-bound (jieba): call from a worker thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from adapters.extractive.deferred import deferred_sentences
from adapters.extractive.judging.assess import (
    DEFAULT_COVERAGE_THRESHOLD,
    hit_text,
    judge_parts,
)
from adapters.extractive.judging.bridges import is_bridge_shaped
from adapters.extractive.judging.support import PartSupport
from adapters.extractive.language.quantities import answers_asked_quantity
from adapters.extractive.language.relevance import SentenceIndex, score_sentences
from adapters.extractive.language.semantic import Similarities
from adapters.extractive.language.sentences import Sentence, split_sentences
from adapters.extractive.language.terms import Haystack, terms
from adapters.extractive.question.chain import carried_words
from adapters.extractive.question.parts import question_parts
from adapters.extractive.question.salience import Stack
from core.messages import text
from core.models import AnswerRequest, Hit
from core.text import shortened

MAX_SENTENCES = 5
CLOSE_IN_MEANING = 0.4  # an unsupported part's closest sentences are shown from this similarity on
CLOSEST_SENTENCES = 3  # sentences shown for a part the evidence does not support
HOP_SENTENCES = 2  # a bridge hop's opening sentences quoted when nothing else singles one out
MEANING_SENTENCES = 3  # sentences quoted for a part supported by meaning rather than words
WORDS_FLOOR = 0.75  # a sentence quoted for its words holds this share of the best one's word weight
MEANING_MARGIN = 0.15  # or is within this of the best similarity in meaning (language/relevance.py)
OUTSIDE_WORDS = 0.9  # the same for a sentence outside the paragraphs the judge found supporting
OUTSIDE_MARGIN = 0.1


QUOTED_PART_CHARS = 80  # a not-found line quotes at most this much of a (very long) question part


def not_found_line(part: str, lang: str) -> str:
    """The plain statement that the sources say nothing about a part (a long part quoted shortened)."""
    return text("extractive.not_found", lang, part=shortened(part, QUOTED_PART_CHARS))


def unconfirmed_line(part: str, lang: str) -> str:
    """Said before the closest passages of a part the evidence does not support."""
    return text("extractive.unconfirmed", lang, part=part)


def closest_sentences(
    support: PartSupport,
    evidence: Sequence[Hit],
    candidates: Sequence[Sentence],
    *,
    threshold: float,
    meaning: Similarities | None = None,
) -> list[Sentence]:
    """For an unsupported part: the best sentences of paragraphs naming one of the part's entities (its
    subject) when it has any and, for a quantity, stating one of the asked kind. A part with a subject
    shows them whenever a paragraph names it; one without, when the evidence holds ``threshold`` of the
    part's words or the best of those sentences holds that share of their weight or is
    ``CLOSE_IN_MEANING`` to the part; else nothing (a near miss about another subject is never shown)."""
    part = support.part
    wanted = terms(part)
    haystack = Haystack.of("\n".join(hit_text(hit) for hit in evidence))
    broadly = bool(wanted) and len(haystack.matched(wanted)) >= threshold * len(wanted)
    named = _naming(support, evidence)
    pool = [s for s in candidates if s.source in named and answers_asked_quantity(part, s.text)]
    if not pool:
        return []
    scored = score_sentences(part, SentenceIndex.of(evidence, candidates), meaning, among=pool)
    if not scored:
        return []
    best = scored[0]
    named_subject = bool(support.terms.entities)  # the pool holds only paragraphs naming it
    if not (named_subject or broadly or best.words >= threshold or best.similarity >= CLOSE_IN_MEANING):
        return []
    return best_sentences(part, evidence, pool, meaning)[:CLOSEST_SENTENCES]


def _naming(support: PartSupport, evidence: Sequence[Hit]) -> set[int]:
    """The 1-based sources of the paragraphs naming one of the part's entities (all of them when it has none)."""
    return {
        index + 1
        for index, hit in enumerate(evidence)
        if not support.terms.entities
        or any(Stack.of(hit_text(hit)).has_entity(entity) for entity in support.terms.entities)
    }


def best_sentences(
    part: str,
    evidence: Sequence[Hit],
    candidates: Sequence[Sentence],
    meaning: Similarities | None = None,
    *,
    preferred: frozenset[int] = frozenset(),
    also: Sequence[str] = (),
) -> list[Sentence]:
    """The sentences that answer a part best (language/relevance.py), in evidence order: the best-scored
    one, and those within ``WORDS_FLOOR`` of the best word share or ``MEANING_MARGIN`` of the best
    similarity (``OUTSIDE_*`` for a sentence outside the ``preferred`` paragraphs, 1-based, when given);
    ``also``: words the part carries from an earlier part's answer (question/chain.py)."""
    scored = score_sentences(part, SentenceIndex.of(evidence, candidates), meaning, also=also)
    if not scored:
        return []
    top = scored[0]
    best_words = max(item.words for item in scored)
    best_similarity = max(item.similarity for item in scored)
    chosen: list[Sentence] = []
    for item in scored:
        sentence = item.sentence
        if len(chosen) >= MAX_SENTENCES:
            break
        outside = bool(preferred) and sentence.source not in preferred
        words_floor, margin = (OUTSIDE_WORDS, OUTSIDE_MARGIN) if outside else (WORDS_FLOOR, MEANING_MARGIN)
        close = (item.words > 0 and item.words >= best_words * words_floor) or (
            meaning is not None and item.similarity >= best_similarity - margin
        )
        if not (item is top or close) or sentence in chosen:
            continue
        if sentence.introduces_list:
            if item is not top and item.words < best_words:
                continue  # a lead-in ("…如下：") only makes sense with the list it announces, when it leads
            chosen.append(sentence)
            chosen.extend(_following(sentence, candidates, room=MAX_SENTENCES - len(chosen), chosen=chosen))
        else:
            # a list item ("（二）醉酒驾驶机动车的；") means nothing without the lead-in it is a case of
            lead = _lead_in(sentence, candidates)
            if lead is not None and lead not in chosen and len(chosen) < MAX_SENTENCES - 1:
                chosen.append(lead)
            chosen.append(sentence)
    return sorted(chosen, key=lambda s: (s.source, s.position))


def _lead_in(sentence: Sentence, candidates: Sequence[Sentence]) -> Sentence | None:
    """For a list item, the sentence of its paragraph that announces the list (the nearest one before it
    ending with a colon); None for any other sentence."""
    if not sentence.is_list_item:
        return None
    before = [s for s in candidates if s.source == sentence.source and s.position < sentence.position]
    return next((s for s in reversed(before) if s.introduces_list), None)


def _following(
    sentence: Sentence, candidates: Sequence[Sentence], *, room: int, chosen: list[Sentence]
) -> list[Sentence]:
    after = [
        s
        for s in candidates
        if s.source == sentence.source and s.position > sentence.position and s not in chosen
    ]
    return after[: max(0, room)]


def _hop_sentences(
    support: PartSupport,
    evidence: Sequence[Hit],
    own: Sequence[Sentence],
    meaning: Similarities | None,
) -> list[Sentence]:
    """What a bridge hop's paragraph adds: its sentence closest in meaning to the part, else those with the
    words the anchor lacked, else its first sentences (they name its subject and say what it is)."""
    if meaning is not None:
        ranked = [s for _, s in meaning.ranked(support.part) if s in own]
        if ranked:
            return ranked[:1]
    anchor = Stack.of(hit_text(evidence[support.paragraphs[0]]))
    lacking = [w for w in (*support.terms.generic, *support.terms.answer_type) if not anchor.hay.contains(w)]
    by_words = best_sentences(" ".join(lacking), evidence, own) if lacking else []
    return by_words[:1] or list(own[:HOP_SENTENCES])


def supported_sentences(
    support: PartSupport,
    evidence: Sequence[Hit],
    candidates: Sequence[Sentence],
    meaning: Similarities | None = None,
    *,
    others: frozenset[int] = frozenset(),
    also: Sequence[str] = (),
) -> list[Sentence]:
    """The best sentences of the paragraphs that support the part, or of another paragraph naming its subject
    that no other part is answered from (``others``, 1-based); the anchor always contributes one, so do the
    other paragraphs the judge found supporting the part and the reranker's first paragraph when it is among
    them (one sentence more each, none displaced, when one shares a word with the part or is close to it in
    meaning), and a bridge hop's linked paragraph what it adds (_hop_sentences). A part pointing back at an
    earlier part's answer (``also``, question/chain.py) is answered by the sentences naming that answer when
    some do."""
    sources = {index + 1 for index in support.paragraphs}
    if support.hop is None:
        sources |= _naming(support, evidence) - others
    pool = [s for s in candidates if s.source in sources]
    naming = [s for s in pool if Haystack.of(s.text).matched(also)] if also else []
    if naming:
        return best_sentences(support.part, evidence, naming, meaning, also=also)
    chosen = list(support.quoted[:MEANING_SENTENCES])
    supporting = frozenset(index + 1 for index in support.paragraphs)
    chosen.extend(
        s
        for s in best_sentences(support.part, evidence, pool, meaning, preferred=supporting)
        if s not in chosen
    )
    chosen = chosen[:MAX_SENTENCES]
    anchor = support.paragraphs[0]
    if not any(s.source == anchor + 1 for s in chosen):
        own = [s for s in pool if s.source == anchor + 1]
        chosen = [
            *chosen[: MAX_SENTENCES - 1],
            *(best_sentences(support.part, evidence, own, meaning)[:1] or own[:1]),
        ]
    if support.hop is None:  # every supporting paragraph is quoted
        for index in support.paragraphs[1:]:
            if not any(s.source == index + 1 for s in chosen):
                own = [s for s in pool if s.source == index + 1]
                chosen = [*chosen, *best_sentences(support.part, evidence, own, meaning)[:1]]
    top = [s for s in pool if s.source == 1]  # the reranker's first paragraph, when it is a candidate
    # (its best sentence shares a word with the part or is close to it in meaning, else it adds nothing)
    if support.hop is None and top and not any(s.source == 1 for s in chosen):
        chosen = [*chosen, *best_sentences(support.part, evidence, top, meaning)[:1]]
    if support.hop is not None:
        own = [s for s in pool if s.source == support.hop + 1]
        added = [s for s in _hop_sentences(support, evidence, own, meaning) if s not in chosen]
        chosen = [*chosen[: MAX_SENTENCES - len(added)], *added]
    order = {source: rank for rank, source in enumerate(support.paragraphs)}
    chosen.sort(key=lambda s: (order.get(s.source - 1, len(order)), s.source, s.position))
    chosen = [*_best_of_the_evidence(support, evidence, candidates, meaning, chosen, others=others), *chosen]
    return [*chosen, *deferred_sentences(support.part, evidence, candidates, chosen)]


def _best_of_the_evidence(
    support: PartSupport,
    evidence: Sequence[Hit],
    candidates: Sequence[Sentence],
    meaning: Similarities | None,
    chosen: Sequence[Sentence],
    *,
    others: frozenset[int],
) -> list[Sentence]:
    """The sentence of the whole evidence that answers the part best, quoted first when it is not quoted
    yet and scores above every quoted one (the paragraphs the judge found supporting need not hold it: a
    part covered by its words can be answered in other words elsewhere); only from a paragraph naming the
    part's subject that no other part is answered from, and never for a bridge (it needs its hop). When no
    quoted sentence comes from such a paragraph, it is quoted first without comparison: the answer then
    names the subject it is about at least once."""
    if not chosen or is_bridge_shaped(support.part):
        return []
    allowed = _naming(support, evidence) - others
    pool = [s for s in candidates if s.source in allowed]
    scored = score_sentences(support.part, SentenceIndex.of(evidence, candidates), meaning, among=pool)
    if not scored or scored[0].sentence in chosen:
        return []
    quoted = [item.score for item in scored if item.sentence in chosen]
    return [scored[0].sentence] if not quoted or scored[0].score > max(quoted) else []


def distinct_texts(sentences: Sequence[Sentence]) -> list[Sentence]:
    """The sentences in order, each text once (two versions of a law, or two documents, saying the same
    thing), cited from the earliest paragraph in the evidence that says it (the preferred version comes
    first there)."""
    earliest: dict[str, Sentence] = {}
    for sentence in sentences:
        key = " ".join(sentence.text.split())
        if key not in earliest or sentence.source < earliest[key].source:
            earliest[key] = sentence
    return list(earliest.values())


def answered_elsewhere(supports: Sequence[PartSupport], support: PartSupport) -> frozenset[int]:
    """The paragraphs (1-based) other parts of the question are answered from, less this part's own."""
    return frozenset(
        index + 1 for other in supports if other is not support for index in other.paragraphs
    ) - {index + 1 for index in support.paragraphs}


def partly_supported(support: PartSupport, evidence: Sequence[Hit]) -> PartSupport | None:
    """An uncovered part that lacks nothing identifiable (PartSupport.lacking), as supported by its best
    paragraph: quoted like a covered part, without the unconfirmed label. None for any other part."""
    if support.covered or support.anchor is None or support.lacking:
        return None
    index = next((i for i, hit in enumerate(evidence) if hit is support.anchor), None)
    return None if index is None else replace(support, paragraphs=(index,))


def answer_pieces(
    request: AnswerRequest,
    *,
    threshold: float = DEFAULT_COVERAGE_THRESHOLD,
    meaning: Similarities | None = None,
) -> list[str]:
    """The answer as stream pieces: the label, then each part's heading and quoted sentences."""
    lang = request.lang
    evidence = request.evidence
    question = request.standalone or request.question
    supports = judge_parts(question, evidence, threshold=threshold, meaning=meaning) if evidence else []
    by_part = {s.part: s for s in supports}
    parts = question_parts(question)
    candidates = split_sentences(evidence)
    pieces = [text("extractive.label", lang) + "\n"]
    previous, answered = "", list[Sentence]()  # the part before and the sentences quoted for it
    for part in parts:
        also = carried_words(part, previous, answered)
        previous, answered = part, []
        if len(parts) > 1:
            pieces.append(text("extractive.part_heading", lang, part=part))
        support = by_part.get(part)
        if support is None:  # a part of nothing but answer-type words: the judge has no say, quote by terms
            chosen = best_sentences(part, evidence, candidates, meaning) if evidence else []
        else:
            others = answered_elsewhere(supports, support)
            quoted = support if support.covered else partly_supported(support, evidence)
            chosen = (
                supported_sentences(quoted, evidence, candidates, meaning, others=others, also=also)
                if quoted is not None
                else []
            )
        lead = "\n" if len(parts) == 1 else ""
        if not chosen and support is not None and evidence:
            closest = distinct_texts(
                closest_sentences(support, evidence, candidates, threshold=threshold, meaning=meaning)
            )
            if closest:
                pieces.append(lead + unconfirmed_line(part, lang) + "\n")
                pieces.extend(f"- {sentence.text} [{sentence.source}]\n" for sentence in closest)
                continue
        if not chosen:
            pieces.append(lead + not_found_line(part, lang) + "\n")
            continue
        chosen = distinct_texts(chosen)
        if len(parts) == 1:
            pieces.append("\n")
        answered = chosen
        pieces.extend(f"- {sentence.text} [{sentence.source}]\n" for sentence in chosen)
    return pieces
