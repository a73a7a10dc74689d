"""Evidence assessment without a model: which parts of the question the evidence covers, and what to search next.

A part is covered when at least ``threshold`` of its salient terms occur in the evidence (content,
document name and heading). Uncovered parts become the ``missing`` text and, at most two, the next
queries. A part whose terms are only partly covered while the newest evidence names an entity the
question does not mention is a bridge (IRCoT-style): its next query pairs the part with that entity.
"Partly" means at least half the threshold, through terms that single the evidence out (a company name
found in every paragraph bridges nothing).
CPU-bound (jieba): call from a worker thread.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from adapters.extractive.parts import question_parts
from adapters.extractive.terms import CJK, Haystack, is_stop, pos_tokens, sentences, squeeze, terms
from core.models import Assessment, Hit
from core.text import detect_language, normalize_query

MAX_QUERIES = 2
DEFAULT_COVERAGE_THRESHOLD = 0.6

_QUOTED = re.compile(r"[「『“《\"]([^」』”》\"]{2,30})[」』”》\"]")
_PROPER_EN = re.compile(r"\b(?:[A-Z][a-z]+(?:\s+[A-Z][a-z]+)+|[A-Z]{2,}[0-9]*)\b")
_CAPITALISED = re.compile(r"\b[A-Z][a-z]{2,}\b")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n\s*)$")
_ENTITY_FLAGS = ("nr", "ns", "nt", "nz")
_UNITS = frozenset("kb mb gb tb cny usd rmb eur am pm utc cst".split())


@dataclass(frozen=True, slots=True)
class PartCoverage:
    """How much of one part's salient terms the evidence contains."""

    part: str
    terms: tuple[str, ...]
    matched: tuple[str, ...]

    @property
    def share(self) -> float:
        """Matched terms over all terms (1.0 for a part without terms)."""
        return len(self.matched) / len(self.terms) if self.terms else 1.0

    @property
    def missing_terms(self) -> tuple[str, ...]:
        """The part's terms the evidence does not contain."""
        return tuple(t for t in self.terms if t not in self.matched)


def hit_text(hit: Hit) -> str:
    """What a hit offers for matching: document name, heading and content."""
    return f"{hit.document_name}\n{hit.heading}\n{hit.content}"


def part_coverage(part: str, haystack: Haystack) -> PartCoverage:
    """Coverage of one part by the evidence haystack."""
    wanted = tuple(terms(part))
    return PartCoverage(part, wanted, tuple(haystack.matched(wanted)))


def assess_evidence(
    question: str,
    evidence: Sequence[Hit],
    searched: Sequence[str],
    *,
    threshold: float = DEFAULT_COVERAGE_THRESHOLD,
) -> Assessment:
    """The verdict {sufficient, missing, queries} for the evidence gathered so far (newest last)."""
    english = detect_language(question) == "en"
    parts = question_parts(question)
    haystack = Haystack.of("\n".join(hit_text(h) for h in evidence))
    coverages = [part_coverage(part, haystack) for part in parts]
    if evidence and all(c.share >= threshold for c in coverages):
        return Assessment(sufficient=True)
    seen = {normalize_query(q) for q in searched}
    notes: list[str] = []
    queries: list[str] = []
    for coverage in coverages:
        if evidence and coverage.share >= threshold:
            continue
        bridgeable = coverage.share >= threshold / 2
        entity = bridge_entity(coverage, evidence, question) if bridgeable else None
        notes.append(_note(coverage.part, entity, english=english))
        for candidate in _candidates(coverage, entity):
            key = normalize_query(candidate)
            if key and key not in seen and len(queries) < MAX_QUERIES:
                seen.add(key)
                queries.append(candidate)
                break
    return Assessment(
        sufficient=False, missing=("; " if english else "；").join(notes), queries=tuple(queries)
    )


def _note(part: str, entity: str | None, *, english: bool) -> str:
    if english:
        if entity:
            return f'only partial evidence for "{part}"; look up "{entity}" next'
        return f'no evidence yet for "{part}"'
    if entity:
        return f"「{part}」只找到部分资料，需要继续查找「{entity}」的相关资料"
    return f"缺少关于「{part}」的资料"


def _candidates(coverage: PartCoverage, entity: str | None) -> list[str]:
    """Next queries for an uncovered part, most specific first."""
    out: list[str] = []
    if entity:
        out.append(f"{coverage.part} {entity}")
        if coverage.missing_terms:
            out.append(" ".join((*coverage.missing_terms, entity)))
    out.append(coverage.part)
    if coverage.terms:
        out.append(" ".join(coverage.terms))
    if coverage.missing_terms and coverage.matched:
        out.append(" ".join(coverage.missing_terms))
    return out


def specific_terms(coverage: PartCoverage, evidence: Sequence[Hit]) -> list[str]:
    """The part's matched terms that single out some evidence (in at most half of the hits, or one)."""
    limit = max(1, len(evidence) // 2)
    stacks = [Haystack.of(hit_text(hit)) for hit in evidence]
    return [t for t in coverage.matched if sum(1 for h in stacks if h.contains(t)) <= limit]


def bridge_entity(coverage: PartCoverage, evidence: Sequence[Hit], question: str) -> str | None:
    """A new entity the newest evidence names next to the part's specific terms, absent from the question.

    Entities come from the sentences that contain a specific matched term outside the entity itself;
    the hit's document title is the last resort.
    """
    asked = squeeze(question)
    anchors = specific_terms(coverage, evidence)
    if not anchors:
        return None

    def new(entity: str) -> bool:
        key = squeeze(entity)
        return key not in asked and key not in _UNITS and not is_stop(entity) and len(key) >= 2

    for hit in reversed(evidence):
        if not Haystack.of(hit_text(hit)).matched(anchors):
            continue
        for sentence in sentences(hit.content):
            for entity in entities_in(sentence):
                rest = Haystack.of(sentence.replace(entity, " "))
                if new(entity) and rest.matched(anchors):
                    return entity
        title = _title(hit)
        if title and new(title):
            return title
    return None


def _title(hit: Hit) -> str:
    return re.sub(r"\.(md|markdown|txt|html?)$", "", hit.document_name, flags=re.IGNORECASE).strip()


def entities_in(text: str) -> list[str]:
    """Named things in a passage: quoted terms, proper nouns, and person/place/organisation names (jieba)."""
    found: list[str] = []

    def add(name: str) -> None:
        name = name.strip()
        if name and name not in found:
            found.append(name)

    for match in _QUOTED.finditer(text):
        add(match.group(1))
    for match in _PROPER_EN.finditer(text):
        add(match.group(0))
    for match in _CAPITALISED.finditer(text):
        word = match.group(0)
        at_start = _SENTENCE_START.search(text[: match.start()])
        if not at_start and not is_stop(word) and not any(word in name.split() for name in found):
            add(word)
    tokens = [t for t in pos_tokens(text, hmm=True) if t.word.strip()]
    for i, token in enumerate(tokens):
        following = tokens[i + 1].word if i + 1 < len(tokens) else ""
        if token.flag == "nr" and len(token.word) == 1 and 1 <= len(following) <= 2 and CJK.match(following):
            add(token.word + following)  # a surname jieba cut off its given name (林 + 远航)
        elif token.flag.startswith(_ENTITY_FLAGS) and len(token.word) >= 2 and CJK.search(token.word):
            add(token.word)
    return found
