"""Follow-up queries and gap notes for the parts the evidence does not cover yet.

For each uncovered part, candidate queries most specific first:

1. bridge hops (IRCoT-style, not for a compared entity): an entity the anchor paragraph names plus the
   few part words the anchor lacks (``Shirley Temple held woman portrayed government position``), for
   the two best pending bridge entities, and the backward hop: the anchor's own subject plus the lacking
   words (the answer's paragraph may name the anchor's subject);
2. the part itself (for a compared entity: the question about that entity alone);
3. for a part with one entity: that entity plus the part's words; then all its terms; then the
   lacking terms.

Every uncovered part gets its best fresh query first (round-robin); remaining room goes to further hops
(a different paragraph to reach), never to rewordings of the same part. At most ``MAX_QUERIES``, and a
query whose normalised form was already searched (or chosen) is never proposed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from adapters.extractive.judging.bridges import is_bridge_shaped
from adapters.extractive.judging.support import PARTIAL_SHARE, PartSupport
from adapters.extractive.language.entities import subject_of
from adapters.extractive.language.terms import join_words, squeeze
from core.messages import text
from core.text import normalize_query

MAX_QUERIES = 2
LACKING_WORDS = 3  # lacking words added to a hop query
HOPS = 2  # bridge entities tried per part


@dataclass(frozen=True, slots=True)
class Choice:
    """A candidate next query; hop marks a bridge or backward hop (a different paragraph to reach)."""

    query: str
    hop: bool = False


def _not_held(support: PartSupport) -> tuple[list[str], list[str]]:
    """The part's generic words and entities its best paragraph does not hold (all of them without one)."""
    best = support.best
    generic = [g for g in support.terms.generic if best is None or g not in best.generic]
    entities = [e for e in support.terms.entities if best is None or e not in best.entities]
    return generic, entities


def _lacking(support: PartSupport) -> list[str]:
    """The part's words its anchor does not contain (generic first), then its answer-type words."""
    generic, entities = _not_held(support)
    return [*generic[:LACKING_WORDS], *entities, *support.terms.answer_type[:2]]


def in_question_order(words: Sequence[str], question: str) -> list[str]:
    """The words in the order the question uses them (so a query reads like the question's own phrases:
    "cars allow infrastructure team", not "allow infrastructure team cars"); words it lacks go last."""
    folded = squeeze(question)
    place = {word: folded.find(squeeze(word)) for word in words}
    return sorted(words, key=lambda word: (place[word] < 0, place[word]))


def _about(name: str, words: Sequence[str]) -> str:
    """A query about a named thing: the name, then the words (kept apart by a space)."""
    rest = join_words(words)
    return f"{name} {rest}" if rest else name


def _hops(support: PartSupport, question: str, lacking: list[str]) -> list[Choice]:
    """Bridge hops to entities a specific anchor names (related sentences first), the backward hop."""
    if not support.anchored:
        return []
    related = [c.name for c in support.candidates if c.weight > 0][:HOPS]
    unrelated = [c.name for c in support.candidates if c.weight <= 0]
    hops = [Choice(_about(name, lacking), hop=True) for name in related]
    if support.anchor is not None and lacking:
        subject = subject_of(support.anchor)
        if squeeze(subject) not in squeeze(question):
            hops.append(Choice(_about(subject, lacking), hop=True))
    room = max(0, HOPS - len(related))
    hops.extend(Choice(_about(name, lacking), hop=True) for name in unrelated[:room])
    return hops


def choices(support: PartSupport, question: str) -> list[Choice]:
    """Next queries for one uncovered part, most specific first (see the module docstring)."""
    terms = support.terms
    lacking = in_question_order(_lacking(support), question)
    out = [] if support.compared else _hops(support, question, lacking)
    out.append(Choice(support.part))
    if len(terms.entities) == 1:
        words = in_question_order([*terms.generic, *terms.answer_type], question)
        out.append(Choice(_about(terms.entities[0], words)))
    everything = in_question_order([*terms.entities, *terms.generic, *terms.answer_type], question)
    if everything:
        out.append(Choice(join_words(everything)))
    if lacking and len(lacking) < len(everything):
        out.append(Choice(join_words(lacking)))
    return out


def pick(per_part: Sequence[Sequence[Choice]], searched: Iterable[str]) -> list[str]:
    """At most MAX_QUERIES fresh, distinct queries: each part's best first, then further hops."""
    seen = {normalize_query(q) for q in searched}
    chosen: list[str] = []

    def take(options: list[Choice], *, hops_only: bool) -> None:
        while options and len(chosen) < MAX_QUERIES:
            choice = options.pop(0)
            key = normalize_query(choice.query)
            if (choice.hop or not hops_only) and key and key not in seen:
                seen.add(key)
                chosen.append(choice.query)
                return

    pending = [list(options) for options in per_part]
    for options in pending:
        take(options, hops_only=False)
    for options in pending:
        take(options, hops_only=True)
    return chosen


NOTED_WORDS = 3  # words of the part a gap note names as not mentioned


def unmentioned(support: PartSupport, question: str) -> list[str]:
    """The part's names and words its best paragraph does not hold, in the question's order; none when that
    paragraph holds under ``PARTIAL_SHARE`` of the part (then nothing was found about it)."""
    if support.best is None or not support.best.reaches(PARTIAL_SHARE):
        return []
    generic, entities = _not_held(support)
    return in_question_order([*entities, *generic], question)[:NOTED_WORDS]


def note(support: PartSupport, lang: str) -> str:
    """The gap description of one uncovered part, in the question's language: for a bridge-shaped part, the
    entity to look up next (the hop still to make); for another part with a closest paragraph, the part's
    words that paragraph does not mention (a name its paragraphs happen to hold, 人民法院 for a question about
    a house bought before marriage, is nothing the user asked about); else that nothing was found about it."""
    entity = support.candidates[0].name if support.candidates and not support.compared else None
    if entity and is_bridge_shaped(support.part):
        return text("extractive.partial_gap", lang, part=support.part, entity=entity)
    words = unmentioned(support, support.part)
    if words:
        separator = text("extractive.gap_word_separator", lang)
        quoted = separator.join(text("extractive.gap_word", lang, word=word) for word in words)
        return text("extractive.words_gap", lang, part=support.part, words=quoted)
    return text("extractive.no_evidence_gap", lang, part=support.part)
