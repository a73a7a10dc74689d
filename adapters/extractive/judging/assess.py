"""Evidence assessment without a model: which parts of the question the evidence supports, and what to search next.

The question is split into parts (question/parts.py: clauses, enumerations, one part per compared entity).
Each part is judged on its own (support.py): covered by one paragraph, or by a paragraph and a paragraph
linked to it, with entity-like terms weighing more than generic words and answer-type words not counted
(question/salience.py); a bridge-shaped part also needs the paragraph about the bridge entity. Terms
scattered over unrelated paragraphs never cover a part. Uncovered parts become the ``missing`` text and,
at most two, the next queries (followup.py), never a normalised repeat of a searched query. A part asking
for a quantity (an amount, duration, count or date) is covered only by paragraphs that state one of that
kind (language/quantities.py) and name what the part asks about in their own section heading or text: the
topic alone does not answer "几天", nor does a sibling section under a document named after it. A verdict
whose uncovered parts lack nothing identifiable is ``partial``: searched on, answered without a notice
(lacks_something, docs/design.md#the-uncertainty-notice). CPU-bound (jieba): call from a worker thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from adapters.extractive.judging.bridges import is_bridge_shaped
from adapters.extractive.judging.followup import choices, note, pick
from adapters.extractive.judging.support import (
    MAX_SUPPORTING,
    PARTIAL_SHARE,
    PartSupport,
    analyse_part,
    hit_text,
    title_backed,
)
from adapters.extractive.language.entities import entities_in, normal, own_heading
from adapters.extractive.language.quantities import answers_asked_quantity, asked_units, asking_clause
from adapters.extractive.language.semantic import SEMANTIC_MARGIN, SEMANTIC_SUPPORT, Similarities
from adapters.extractive.language.sentences import Sentence, split_sentences
from adapters.extractive.language.terms import Haystack, terms
from adapters.extractive.question.comparison import compared_entities
from adapters.extractive.question.parts import question_parts
from adapters.extractive.question.salience import Stack, match, part_terms
from core.messages import text
from core.models import Assessment, Hit
from core.text import detect_language

DEFAULT_COVERAGE_THRESHOLD = 0.6
__all__ = [
    "DEFAULT_COVERAGE_THRESHOLD",
    "assess_evidence",
    "hit_text",
    "judge_parts",
]


def _states_it_about_the_part(support: PartSupport, hit: Hit) -> bool:
    """The paragraph states a quantity of the asked kind, and its own text (its section heading and content,
    not the document name or parent headings) names something the part asks about: under "病假与其他假期 >
    事假", "每次不超过 3 天" is about 事假, not 病假."""
    if not answers_asked_quantity(support.part, hit.content):
        return False
    asked = (*support.terms.entities, *support.terms.generic)
    own = Haystack.of(f"{own_heading(hit)}\n{hit.content}")
    return not asked or any(own.contains(term) for term in asked)


def _answering_the_asked_kind(
    support: PartSupport, evidence: Sequence[Hit], stacks: Sequence[Stack], threshold: float
) -> PartSupport:
    """A part asking for a quantity is supported only by paragraphs that state one about it (not just its
    topic, not under a sibling section's heading): when none of its supporting paragraphs does, another
    paragraph that covers the part's terms on its own and states one supports it instead (the best
    covering ones are often those repeating the topic's words); without one it is not covered; with one,
    a paragraph that does not is no longer quoted for it (unless it is the anchor of a linked hop)."""
    if not support.covered or asked_units(support.part) is None:
        return support
    stating = tuple(i for i in support.paragraphs if _states_it_about_the_part(support, evidence[i]))
    if not stating and support.hop is None:
        stating = _other_stating(support, evidence, stacks, threshold)
    if not stating:
        return replace(support, covered=False)
    if support.hop is not None or stating == support.paragraphs:
        return support
    return replace(support, anchor=evidence[stating[0]], paragraphs=stating)


def _other_stating(
    support: PartSupport, evidence: Sequence[Hit], stacks: Sequence[Stack], threshold: float
) -> tuple[int, ...]:
    """Paragraphs beyond the part's supporting ones that cover its terms on their own and state a quantity of
    the asked kind about it, best covering first (at most ``MAX_SUPPORTING``)."""
    found = []
    for i, stack in enumerate(stacks):
        if i in support.paragraphs:
            continue
        single = match(support.terms, [stack])
        if single.covers(threshold) and _states_it_about_the_part(support, evidence[i]):
            found.append((-single.share, i))
    return tuple(i for _, i in sorted(found)[:MAX_SUPPORTING])


def _covered_by(support: PartSupport, evidence: Sequence[Hit], quoted: Sequence[Sentence]) -> PartSupport:
    """The part covered by the quoted sentences: their paragraphs (at most ``MAX_SUPPORTING``) support it."""
    paragraphs = tuple(dict.fromkeys(s.source - 1 for s in quoted))[:MAX_SUPPORTING]
    return replace(
        support,
        covered=True,
        anchor=evidence[paragraphs[0]],
        paragraphs=paragraphs,
        quoted=tuple(s for s in quoted if s.source - 1 in paragraphs),
    )


def focus_term(part: str, sentences: Sequence[Sentence]) -> str | None:
    """The part's most specific word in the evidence: of its terms that some sentence contains, the one the
    fewest sentences contain (a quantity must be stated about it: "子女教育 … 多少钱")."""
    stacks = [Haystack.of(sentence.text) for sentence in sentences]
    counts = [(sum(stack.contains(term) for stack in stacks), term) for term in terms(part)]
    present = [(count, term) for count, term in counts if count]
    return min(present)[1] if present else None


def _by_meaning(
    support: PartSupport, evidence: Sequence[Hit], stacks: Sequence[Stack], meaning: Similarities | None
) -> PartSupport:
    """An uncovered part supported by sentences close in meaning, on the conditions of language/semantic.py."""
    if support.covered or support.compared or meaning is None or is_bridge_shaped(support.part):
        return support
    ranked = meaning.ranked(support.part)
    if not ranked or ranked[0][0] < SEMANTIC_SUPPORT:
        return support
    floor = max(SEMANTIC_SUPPORT, ranked[0][0] - SEMANTIC_MARGIN)
    focus = focus_term(support.part, meaning.sentences) if asked_units(support.part) is not None else None
    quoted: list[Sentence] = []
    for score, sentence in ranked:
        if score < floor:
            break
        stack = stacks[sentence.source - 1]
        if (
            all(stack.has_entity(e) for e in support.terms.entities)
            and answers_asked_quantity(support.part, sentence.text)
            and (focus is None or Haystack.of(sentence.text).contains(focus))
        ):
            quoted.append(sentence)
    return _covered_by(support, evidence, quoted) if quoted else support


ASKING_CLAUSE_TERMS = 2  # a clause asking for a quantity names at least this many of the part's terms


def _by_the_asking_clause(
    support: PartSupport, evidence: Sequence[Hit], sentences: Sequence[tuple[Sentence, Stack]]
) -> PartSupport:
    """An uncovered part asking for a quantity in one of its clauses ("被单位辞退了，多久之内可以去申请劳动仲裁"),
    answered by one sentence that states a quantity of the asked kind, names every entity of the part and every
    term of the asking clause ("劳动争议申请仲裁的时效期间为一年"): the other clauses describe the asker's
    situation, in words the sources need not use."""
    if support.covered or support.compared or is_bridge_shaped(support.part):
        return support
    clause = asking_clause(support.part)
    if clause == support.part:
        return support
    own = Haystack.of(clause)
    asked = [term for term in support.terms.generic if own.contains(term)]
    if len(asked) < ASKING_CLAUSE_TERMS:
        return support
    answering = [
        sentence
        for sentence, stack in sentences
        if answers_asked_quantity(support.part, sentence.text)
        and all(stack.has_entity(e) for e in support.terms.entities)
        and all(stack.hay.contains(term) for term in asked)
    ]
    return _covered_by(support, evidence, answering) if answering else support


def judge_parts(
    question: str, evidence: Sequence[Hit], *, threshold: float, meaning: Similarities | None = None
) -> list[PartSupport]:
    """Each part of the question with its support in the evidence (by terms, else by meaning)."""
    stacks = [Stack.of(hit_text(hit)) for hit in evidence]
    parts = question_parts(question)
    foci = compared_entities(parts)
    weighted = [part_terms(part, focus=focus) for part, focus in zip(parts, foci, strict=True)]
    if any(t.total for t in weighted):  # a part of nothing but answer-type words ("Which year") adds no gap
        kept = [(t, focus) for t, focus in zip(weighted, foci, strict=True) if t.total]
    else:
        kept = list(zip(weighted, foci, strict=True))
    supports = [
        analyse_part(
            title_backed(t, evidence, stacks),
            evidence,
            stacks,
            question=question,
            threshold=threshold,
            compared=bool(focus),
        )
        for t, focus in kept
    ]
    supports = [_answering_the_asked_kind(s, evidence, stacks, threshold) for s in supports]
    supports = [_by_meaning(s, evidence, stacks, meaning) for s in supports]
    if all(s.covered for s in supports):
        return supports
    sentences = meaning.sentences if meaning is not None else split_sentences(evidence)
    prepared = [(sentence, Stack.of(sentence.text)) for sentence in sentences]  # once for every part
    judged = [_by_the_asking_clause(s, evidence, prepared) for s in supports]
    return [
        replace(s, lacking=lacks_something(s, evidence, stacks, threshold=threshold)) if not s.covered else s
        for s in judged
    ]


def _named_things(hit: Hit) -> set[str]:
    """The named things of a paragraph, normalised (its heading and text)."""
    return {normal(name) for name in entities_in(f"{hit.heading}\n{hit.content}")}


def split_over_paragraphs(
    support: PartSupport, evidence: Sequence[Hit], stacks: Sequence[Stack], threshold: float
) -> bool:
    """Whether the part's anchor and another paragraph that names something the anchor names together cover
    it, the other adding words the anchor lacks (and stating a quantity of the kind the part asks for, if it
    asks for one): what the part asks is in the evidence, split over two paragraphs the judge could not link
    through the anchor's bridge (an alias, a title written otherwise)."""
    if support.anchor is None or support.best is None:
        return False
    anchor = Stack.of(hit_text(support.anchor))
    names: set[str] | None = None  # the anchor's named things, read when a paragraph completes the part
    for hit, stack in zip(evidence, stacks, strict=True):
        if hit is support.anchor:
            continue
        pair = match(support.terms, [anchor, stack])
        if not (pair.covers(threshold) and not support.best.reaches(pair.share)):  # it adds words
            continue
        names = _named_things(support.anchor) if names is None else names
        if names & _named_things(hit) and answers_asked_quantity(support.part, hit.content):
            return True
    return False


def _holds_it_all(support: PartSupport) -> bool:
    """Whether the part's anchor holds every one of its terms and states the asked kind of quantity about it
    ("…one of the American League's original eight charter franchises when the league was established in what
    year" and the team's page saying so with 1901): the hop the part's shape implies is unverified, but
    nothing the user should be warned about is missing."""
    if support.anchor is None or support.best is None:
        return False
    return support.best.reaches(1.0) and _states_it_about_the_part(support, support.anchor)


def lacks_something(
    support: PartSupport, evidence: Sequence[Hit], stacks: Sequence[Stack], *, threshold: float
) -> bool:
    """Whether an uncovered part lacks something identifiable, not only support in degree: an entity it names
    appears in no paragraph, it asks for a quantity that no paragraph states about it, no paragraph holds
    ``PARTIAL_SHARE`` of its weight, or it is bridge-shaped, its anchor's bridge is nowhere in the evidence
    and no paragraph sharing a name with the anchor completes it (split_over_paragraphs, which for a part
    asking a quantity must state one of the asked kind; such a part whose anchor alone holds all its terms and
    states the asked kind lacks nothing: _holds_it_all). A part that is only split over paragraphs,
    paraphrased or not yet linked to its bridge lacks nothing the user should be warned about
    (docs/design.md#the-uncertainty-notice)."""
    if support.covered:
        return False
    if support.best is None or not support.best.reaches(PARTIAL_SHARE):
        return True
    if asked_units(support.part) is not None:
        return not (
            is_bridge_shaped(support.part)
            and (_holds_it_all(support) or split_over_paragraphs(support, evidence, stacks, threshold))
        )
    if support.unreached and is_bridge_shaped(support.part):
        return not split_over_paragraphs(support, evidence, stacks, threshold)
    return any(not any(stack.has_entity(entity) for stack in stacks) for entity in support.terms.entities)


def assess_evidence(
    question: str,
    evidence: Sequence[Hit],
    searched: Sequence[str],
    *,
    threshold: float = DEFAULT_COVERAGE_THRESHOLD,
    meaning: Similarities | None = None,
) -> Assessment:
    """The verdict {sufficient, missing, queries} for the evidence gathered so far (newest last)."""
    lang = detect_language(question)
    supports = judge_parts(question, evidence, threshold=threshold, meaning=meaning)
    if evidence and all(s.covered for s in supports):
        return Assessment(sufficient=True)
    gaps = [s for s in supports if not s.covered or not evidence]
    queries = pick([choices(s, question) for s in gaps], searched)
    notes = [note(s, lang) for s in gaps]
    partial = bool(evidence) and not any(s.lacking for s in gaps)
    return Assessment(
        sufficient=False,
        missing=text("gap.separator", lang).join(notes),
        queries=tuple(queries),
        partial=partial,
    )
