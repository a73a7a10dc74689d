"""Weighted terms of a question part: entity-like terms outweigh generic words; answer-type words don't count.

* entity terms: proper-noun spans, quoted titles, numbers, Latin acronyms and jieba names in the part;
  matched as whole phrases (aliases included), weight ``ENTITY_WEIGHT``; a support set must contain
  every one of them.
* generic terms: the remaining salient terms (stop words removed, jieba for Chinese), weight 1.
* answer-type terms: the words naming what is asked for ("what *city*", "哪个*部门*"); the answer
  replaces them, so evidence need not contain them. They are excluded from coverage but kept for
  follow-up queries.

Coverage of a set of paragraphs = weighted share of the part's terms found in that set.
CPU-bound (jieba): call from a worker thread.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from adapters.extractive.language.entities import (
    chinese_names,
    english_spans,
    normal,
    numbers,
    quoted,
    titled_terms,
)
from adapters.extractive.language.terms import (
    ALIASES,
    CJK,
    Haystack,
    fold,
    is_content,
    pos_tokens,
    squeeze,
    terms,
)

ENTITY_WEIGHT = 3.0
_EDGE = " \t,，、;；:：.。?？!！"
_WH_EN = re.compile(r"\b(?:what|which|how many|how much)\s+((?:[\w'-]+\s+){0,3}[\w'-]+)", re.IGNORECASE)
_WH_ZH = re.compile(r"(?:什么|哪个|哪些|哪种|哪家|哪位|哪一个|哪一种|哪)")
# ASCII edges, not \b: CJK characters are word characters, so "MP3在编码…" has no \b after "MP3"
_ACRONYM = re.compile(r"(?<![A-Za-z0-9])(?:[A-Z][A-Z0-9]{1,}[a-z]?|[A-Za-z]+\d+[A-Za-z\d]*)(?![A-Za-z0-9])")
_STOP_EN_TYPE = frozenset(
    "is was were are be been do does did has have had can could will would should may might to of in on at "
    "for by from with as that who which whose".split()
)


@dataclass(frozen=True, slots=True)
class PartTerms:
    """The weighted terms of one question part."""

    part: str
    entities: tuple[str, ...]
    generic: tuple[str, ...]
    answer_type: tuple[str, ...]

    @property
    def total(self) -> float:
        """The weight of all counted terms."""
        return ENTITY_WEIGHT * len(self.entities) + len(self.generic)


SHARE_TOLERANCE = 1e-9  # shares are sums of weights: equal ones may differ in the last bits


@dataclass(frozen=True, slots=True)
class Match:
    """Which of a part's terms a set of paragraphs contains."""

    terms: PartTerms
    entities: tuple[str, ...]
    generic: tuple[str, ...]

    @property
    def share(self) -> float:
        """Weighted share of the counted terms found (1.0 for a part without counted terms)."""
        total = self.terms.total
        found = ENTITY_WEIGHT * len(self.entities) + len(self.generic)
        return found / total if total else 1.0

    @property
    def complete(self) -> bool:
        """Whether every entity term is found."""
        return len(self.entities) == len(self.terms.entities)

    def reaches(self, share: float) -> bool:
        """At least ``share`` of the weight found (equal within float noise)."""
        return self.share >= share - SHARE_TOLERANCE

    def covers(self, threshold: float) -> bool:
        """Every entity found and at least ``threshold`` of the weight."""
        return self.complete and self.reaches(threshold)


def answer_type_words(part: str) -> list[str]:
    """Words naming the kind of answer asked for: the words after what/which/how many up to the verb
    ("which British university"), or the word after 什么/哪个."""
    found: list[str] = []
    if CJK.search(part):
        tokens = [t for t in pos_tokens(part) if t.word.strip()]
        for i, token in enumerate(tokens[:-1]):
            following = tokens[i + 1]
            if _WH_ZH.fullmatch(token.word) and is_content(following):
                found.append(fold(following.word))
        return found
    for match in _WH_EN.finditer(part):
        for word in match.group(1).split():
            low = word.lower()
            if low in _STOP_EN_TYPE or (len(low) > 4 and low.endswith(("ed", "ing"))):
                break
            found.append(low)
    return found


def part_entities(part: str) -> list[str]:
    """Entity-like terms of a part: quoted titles, proper-noun spans, acronyms, numbers, jieba names, and
    names of documents and bodies by their kind (行政复议法, 员工手册)."""
    found: list[str] = []
    keys: set[str] = set()

    def add(name: str) -> None:
        key = normal(name)
        if len(squeeze(key)) < 2 and not key.isdigit():
            return
        if any(key in other for other in keys):
            return
        keys.add(key)
        found.append(name.strip())

    for name in quoted(part):
        add(name)
    if CJK.search(part):
        for match in _ACRONYM.finditer(part):
            add(match.group(0))
        for name in chinese_names(part):
            add(name)
        for name in titled_terms(part):
            add(name)
    else:
        for name in english_spans(part, question=True):
            add(name)
    for number in numbers(part):
        add(number)
    return found


def part_terms(part: str, *, focus: str = "") -> PartTerms:
    """Split a part's salient terms into entity, generic and answer-type terms.

    With a focus (the compared entity of a distributed part) only the focus is a mandatory entity: the
    part's other names are values of the compared property ("from England", "in Michigan") that the
    paragraph about the focus may well not contain, so they count as generic terms.
    """
    kinds = set(answer_type_words(part))
    entities = [e for e in part_entities(part) if not set(normal(e).split()) <= kinds]
    values: list[str] = []
    if focus.strip():
        key = normal(focus)
        values = [e for e in entities if normal(e) not in key and key not in normal(e)]
        entities = [e for e in entities if e not in values] or [focus.strip(_EDGE)]
    inside = " ".join(normal(e) for e in [*entities, *values])
    inside_squeezed = squeeze(inside)
    generic: list[str] = []
    answer: list[str] = []
    for term in terms(part):
        if CJK.search(term):
            if squeeze(term) in inside_squeezed:
                continue
        elif re.search(rf"(?<![a-z0-9]){re.escape(term)}(?![a-z0-9])", inside):
            continue
        (answer if term in kinds else generic).append(term)
    return PartTerms(part, tuple(entities), tuple([*values, *generic]), tuple(answer))


@dataclass(frozen=True, slots=True)
class Stack:
    """A paragraph's text prepared for term and phrase lookups."""

    hay: Haystack
    plain: str

    @classmethod
    def of(cls, text: str) -> Stack:
        """Prepare text for lookups."""
        return cls(Haystack.of(text), normal(text))

    def has_entity(self, entity: str) -> bool:
        """Whether the entity occurs as a phrase (a number also as an ordinal: 58 in "the 58th"); a Latin name
        also matches with every word present."""
        key = normal(entity)
        if CJK.search(key) or key in ALIASES:
            return self.hay.contains(fold(entity).strip())
        ordinal = "(?:st|nd|rd|th)?" if key.isdigit() else ""  # "58th" in the question is the number 58
        if re.search(rf"(?<![0-9a-zà-ÿ_]){re.escape(key)}{ordinal}(?![0-9a-zà-ÿ_])", self.plain):
            return True
        words = [w for w in re.findall(r"[^\W_][\w'-]*", key) if len(w) > 1]
        return len(words) >= 2 and all(
            re.search(rf"(?<![0-9a-zà-ÿ_]){re.escape(w)}(?![0-9a-zà-ÿ_])", self.plain) for w in words
        )


def match(terms_: PartTerms, stacks: Sequence[Stack]) -> Match:
    """The part's terms found in at least one of the stacks."""
    entities = tuple(e for e in terms_.entities if any(s.has_entity(e) for s in stacks))
    generic = tuple(g for g in terms_.generic if any(_has_word(s, g) for s in stacks))
    return Match(terms_, entities, generic)


def _has_word(stack: Stack, term: str) -> bool:
    """A generic term: a folded word by prefix, a name (capitals or spaces) as a phrase."""
    if term != fold(term) or " " in term:
        return stack.has_entity(term)
    return stack.hay.contains(term)
