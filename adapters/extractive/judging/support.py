"""Which paragraphs support a question part: one paragraph, or two linked ones, never scattered evidence.

For a part, paragraphs are ranked by the share of its terms they contain, each term weighted by its
kind (question/salience.py) and by how rare it is in the evidence; the best few are anchors. A part is
covered when

* an anchor alone contains every entity term and at least ``threshold`` of the weight, unless it lacks
  some of the part's words (matching less than ``IMPLIED_HOP_SHARE`` of the weight) while naming, in the
  sentences that match the part, entities the question does not mention: the missing words are then
  expected in a paragraph about one of those entities;
* or an anchor plus one paragraph linked to it does: a paragraph *about* one of the anchor's top
  bridge entities (forward link, IRCoT's next hop), or about one of its other names when that paragraph adds
  terms the anchor lacks, a paragraph that names the anchor's own subject
  and adds terms the anchor lacks (backward link), or a paragraph about a name the question gives and the
  anchor names too that adds terms the anchor lacks (the question states its own bridge: "…represented
  Virginia Commonwealth University, which was founded in what year?") or names the anchor's subject back
  (the two pages name each other, which is the hop: "The author of Sexual Politics attended which
  university?" with the book's page naming Kate Millett and hers naming the book).

A bridge-shaped part (bridges.py) is covered only through a link, however many of its words the anchor
contains. A compared part (one entity of a comparison) asks about that entity itself and needs a
paragraph of its own: one about it (its title), or one covering the part that names the entity in its
heading or first sentence (where a paragraph names its subject) or contains every word of the part; a
passing mention in another entity's paragraph is not support. An anchor that matches only terms found
in most of the evidence (a company name in every paragraph) singles nothing out: it proposes no bridge.
A run of capitalised words no paragraph holds is read up to the evidence's title it begins or ends with,
or as the evidence's title it is one typing slip away from (title_backed). CPU-bound (jieba): call from a
worker thread.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from adapters.extractive.judging.bridges import (
    Candidate,
    bridge_candidates,
    is_bridge_shaped,
    passage_sentences,
)
from adapters.extractive.language.entities import is_about, normal, subject_of
from adapters.extractive.language.sentences import Sentence
from adapters.extractive.language.terms import CJK, squeeze
from adapters.extractive.language.terms import terms as terms_of
from adapters.extractive.question.salience import ENTITY_WEIGHT, Match, PartTerms, Stack, match
from core.models import Hit
from core.retrieval.rerank import document_title

ANCHORS = 3  # paragraphs tried as a part's anchor
BRIDGE_CANDIDATES = 2  # an anchor's top bridge entities whose paragraphs complete a part
ANCHORED_SHARE = 0.3  # an anchor without the part's entities bridges only from this share on
ALSO_SHARE = 0.75  # another paragraph covering the part alone supports it too from this share of the anchor's
IMPLIED_HOP_SHARE = 0.8  # an anchor matching this much of the part needs no implied hop
MAX_SUPPORTING = 4  # paragraphs the answer may quote for one part
PARTIAL_SHARE = 0.5  # an uncovered part holding this share of its weight in one paragraph is partly supported


def hit_text(hit: Hit) -> str:
    """What a hit offers for matching: document name, heading and content."""
    return f"{hit.document_name}\n{hit.heading}\n{hit.content}"


@dataclass(frozen=True, slots=True)
class PartSupport:
    """The verdict for one part: covered or not, by what, and which bridge entities to look up next."""

    terms: PartTerms
    covered: bool
    anchor: Hit | None = None
    best: Match | None = None
    candidates: tuple[Candidate, ...] = ()
    compared: bool = False
    anchored: bool = False  # the anchor singles something out, so hops from it make sense
    paragraphs: tuple[int, ...] = ()  # evidence indexes that support the part: anchor, linked hop, others
    hop: int | None = None  # the linked paragraph of a bridge hop, when the part needed one
    quoted: tuple[Sentence, ...] = ()  # sentences that support the part by meaning (language/semantic.py)
    unreached: bool = False  # the anchor's best bridge entity: no paragraph about it, none other naming it
    lacking: bool = False  # uncovered and lacking something identifiable (judging.assess.lacks_something)

    @property
    def part(self) -> str:
        """The part's text."""
        return self.terms.part


def title_backed(terms: PartTerms, evidence: Sequence[Hit], stacks: Sequence[Stack]) -> PartTerms:
    """The part's terms with each multi-word Latin entity that no paragraph contains cut to the longest run
    of its words at either edge that is exactly the title of an evidence document ("Neil Jordan American" ->
    "Neil Jordan", "Between Frederick King Keller" -> "Frederick King Keller"); the words cut off become
    generic terms. Capitalised words run together in a question where a name meets a demonym or an
    opener, and the dataset's own titles tell where the name ends. A whole entity one typing slip away from
    exactly one title ("Withing You Without You") is read as that title."""
    titles: dict[str, str] | None = None  # the evidence's titles by their normal form: built when needed
    entities: list[str] = []
    generic = list(terms.generic)
    for entity in terms.entities:
        words = entity.split()
        if CJK.search(entity) or len(words) < 2 or any(stack.has_entity(entity) for stack in stacks):
            entities.append(entity)
            continue
        if titles is None:
            titles = {normal(title): title for title in (document_title(subject_of(h)) for h in evidence)}
        misspelt = _misspelt_title(entity, titles)
        if misspelt is not None:
            entities.append(misspelt)
            continue
        title = next(
            (
                (start, end)
                for size in range(len(words) - 1, 0, -1)
                for start, end in ((0, size), (len(words) - size, len(words)))
                if normal(" ".join(words[start:end])) in titles
            ),
            None,
        )
        if title is None:
            entities.append(entity)
            continue
        start, end = title
        entities.append(" ".join(words[start:end]))
        rest = [*terms_of(" ".join(words[:start])), *terms_of(" ".join(words[end:]))]
        generic.extend(word for word in rest if word not in generic)
    if entities == list(terms.entities):
        return terms
    return replace(terms, entities=tuple(entities), generic=tuple(generic))


MISSPELT_MIN_CHARS = 10  # a name this long that no paragraph holds may be a title typed with one slip


def _misspelt_title(entity: str, titles: dict[str, str]) -> str | None:
    """The one evidence title (by normal form) the name is a slip of the keyboard away from ("Withing You
    Without You" for "Within You Without You", "St. Judt Medical"): one letter changed, added or dropped (two
    from 20 letters on). Short names never match this way ("Ireland" is not "Iceland")."""
    name = normal(entity)
    if len(name) < MISSPELT_MIN_CHARS:
        return None
    allowed = 1 + len(name) // 20
    close = [
        title
        for key, title in titles.items()
        if abs(len(key) - len(name)) <= allowed and _edits(name, key, allowed) <= allowed
    ]
    return close[0] if len(close) == 1 else None


def _edits(a: str, b: str, limit: int) -> int:
    """Levenshtein distance of two short strings, stopping once it exceeds limit (returns limit + 1). By hand:
    the standard library has no edit distance (difflib's ratio counts matching blocks), and a bounded one over
    the few titles of an evidence set is not worth a dependency."""
    previous = list(range(len(b) + 1))
    for i, char in enumerate(a, 1):
        current = [i]
        for j, other in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char != other)))
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


def term_weights(terms: PartTerms, singles: Sequence[Match]) -> dict[str, float]:
    """Each term's ranking weight: its kind's weight times log(1 + N / (1 + paragraphs containing it))."""
    count = len(singles)
    weights: dict[str, float] = {}
    for entity in terms.entities:
        df = sum(1 for m in singles if entity in m.entities)
        weights[entity] = ENTITY_WEIGHT * math.log(1 + count / (1 + df))
    for word in terms.generic:
        df = sum(1 for m in singles if word in m.generic)
        weights.setdefault(word, math.log(1 + count / (1 + df)))
    return weights


def _specific(terms: PartTerms, single: Match, singles: Sequence[Match]) -> bool:
    """Whether the paragraph matches an entity, or enough of the part through a term most paragraphs lack."""
    if single.entities:
        return True
    limit = max(1, len(singles) // 2)
    rare = any(sum(1 for m in singles if word in m.generic) <= limit for word in single.generic)
    return rare and single.share >= ANCHORED_SHARE


def _supports_compared(anchor: Hit, single: Match, terms: PartTerms, threshold: float) -> bool:
    """A compared entity's own paragraph: about it (its title), or covering the part while naming the
    entity where a paragraph names its subject (heading or first sentence), or covering every word."""
    if not single.complete:
        return False
    if any(is_about(anchor, e) for e in terms.entities):
        return True
    if not single.covers(threshold):
        return False
    opening = passage_sentences(anchor.content)[:1]
    lead = Stack.of(" ".join([anchor.heading, *opening]))
    return all(lead.has_entity(e) for e in terms.entities) or single.share >= 1.0


def _names(hit: Hit, subject: str) -> bool:
    """Whether the hit's text names the subject (a document title)."""
    key = normal(subject)
    if len(squeeze(key)) < 3:
        return False
    text = normal(f"{hit.heading}\n{hit.content}")
    if CJK.search(key):
        return squeeze(key) in text.replace(" ", "")
    return re.search(rf"(?<![0-9a-zà-ÿ_]){re.escape(key)}(?![0-9a-zà-ÿ_])", text) is not None


def _alone_naming(evidence: Sequence[Hit], anchor: int, name: str) -> bool:
    """Whether no paragraph but the anchor names the bridge entity: nothing in the evidence connects through it."""
    return not any(_names(hit, name) for i, hit in enumerate(evidence) if i != anchor)


def _linked_cover(
    terms: PartTerms,
    evidence: Sequence[Hit],
    stacks: Sequence[Stack],
    a: int,
    single: Match,
    *,
    bridges: Sequence[str],
    further: Sequence[str],
    asked: str,
    threshold: float,
) -> tuple[Match, int] | None:
    """The joint match of anchor ``a`` and a paragraph linked to it that completes the part with it."""
    subject = subject_of(evidence[a])
    # a name the question gives that the anchor names too: the question's own bridge
    named = [e for e in terms.entities if _names(evidence[a], e)]
    for b, other in enumerate(evidence):
        if b == a:
            continue
        forward = any(is_about(other, name) for name in bridges)
        backward = squeeze(subject) not in asked and _names(other, subject)
        through_named = any(is_about(other, name) for name in named)
        # the page of a name the anchor gives further down its ranking: a hop when it adds the missing words
        farther = any(is_about(other, name) for name in further)
        if not (forward or backward or through_named or farther):
            continue
        pair = match(terms, [stacks[a], stacks[b]])
        adds = len(pair.entities) + len(pair.generic) > len(single.entities) + len(single.generic)
        # the named thing's page names the anchor's subject back: the two pages naming each other are the hop
        mutual = through_named and backward
        if pair.covers(threshold) and (forward or adds or mutual):
            return pair, b
    return None


def _also_covering(
    singles: Sequence[Match], relevance: Sequence[float], anchor: int, threshold: float
) -> tuple[int, ...]:
    """Other paragraphs that cover the part on their own about as well as the anchor (best first)."""
    floor = ALSO_SHARE * relevance[anchor]
    others = [
        i
        for i, single in enumerate(singles)
        if i != anchor and single.covers(threshold) and relevance[i] >= floor
    ]
    others.sort(key=lambda i: -relevance[i])
    return tuple(others[: MAX_SUPPORTING - 1])


def analyse_part(
    terms: PartTerms,
    evidence: Sequence[Hit],
    stacks: Sequence[Stack],
    *,
    question: str,
    threshold: float,
    compared: bool = False,
) -> PartSupport:
    """How the evidence supports one part (see the module docstring)."""
    bridge_shaped = not compared and is_bridge_shaped(terms.part)
    singles = [match(terms, [stack]) for stack in stacks]
    weights = term_weights(terms, singles)
    total = sum(weights.values()) or 1.0
    relevance = [sum(weights[t] for t in (*m.entities, *m.generic)) / total for m in singles]
    anchors = sorted(
        (i for i in range(len(evidence)) if singles[i].entities or singles[i].generic),
        key=lambda i: (-relevance[i], -evidence[i].score, -i),
    )[:ANCHORS]
    asked = squeeze(question)
    pending: tuple[Candidate, ...] = ()
    anchored = unreached = False
    for rank, a in enumerate(anchors):
        anchor, single = evidence[a], singles[a]
        specific = _specific(terms, single, singles)
        # A compared entity never hops through a link (followup ignores its candidates): no bridge search.
        ranked = bridge_candidates(anchor, terms, question) if specific and not compared else []
        if rank == 0:
            pending = tuple(c for c in ranked if not any(is_about(hit, c.name) for hit in evidence))
            anchored = specific
            unreached = bool(ranked) and ranked[0] in pending and _alone_naming(evidence, a, ranked[0].name)
        also = _also_covering(singles, relevance, a, threshold)
        if compared:
            if _supports_compared(anchor, single, terms, threshold):
                return PartSupport(terms, True, anchor, single, compared=True, paragraphs=(a, *also))
            continue  # a compared entity needs a paragraph of its own, not one reached through a link
        lacking = len(single.generic) < len(terms.generic)
        bridged = lacking and single.share < IMPLIED_HOP_SHARE and any(c.weight > 0 for c in ranked)
        if not bridge_shaped and not bridged and single.covers(threshold):
            return PartSupport(terms, True, anchor, single, paragraphs=(a, *also))
        bridges = [c.name for c in ranked[:BRIDGE_CANDIDATES]]
        further = [c.name for c in ranked[BRIDGE_CANDIDATES:]]
        linked = _linked_cover(
            terms,
            evidence,
            stacks,
            a,
            single,
            bridges=bridges,
            further=further,
            asked=asked,
            threshold=threshold,
        )
        if linked is not None:
            pair, b = linked
            others = tuple(i for i in also if i != b)
            return PartSupport(terms, True, anchor, pair, paragraphs=(a, b, *others), hop=b)
    if not anchors:
        return PartSupport(terms, False, compared=compared)
    top = anchors[0]
    return PartSupport(
        terms,
        False,
        evidence[top],
        singles[top],
        candidates=pending,
        compared=compared,
        anchored=anchored,
        unreached=unreached,
    )
