"""Bridge reasoning: whether a part describes its subject through another thing, and which entities an
anchor paragraph names that could be that thing (IRCoT's next hop, found without a model).

A bridge-shaped part asks about something described relative to another thing: a relative clause
("the woman who portrayed X"), a relation ("the director of X"), a participle ("a film directed by X"),
or in Chinese a verb phrase modifying a noun that modifies what is asked ("负责 VPN 运维的团队的楼层").

Bridge candidates are the names in the anchor that the question does not contain and that are not the
anchor's own subject, ranked by the sentence that names them (relation words count fully, the part's
other entities half), then by closeness to the matched words; a one-word adjective-like name
("American comedy film") is no candidate. CPU-bound (jieba): call from a worker thread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from adapters.extractive.language.entities import entities_in, is_qualified, normal, same_entity, subject_of
from adapters.extractive.language.terms import CJK, is_content, pos_tokens, sentences, squeeze, stem
from adapters.extractive.question.salience import PartTerms, Stack, match
from core.models import Hit

_RELATIVE_EN = re.compile(r"\b[\w'-]+,?\s+(?:who|whom|whose|that|which|where)\s", re.IGNORECASE)
_RELATION_EN = re.compile(
    r"\b(?:the|a|an|this|that|its|his|her|their)\s+(?:[\w'-]+\s+){0,2}[a-z][\w'-]*\s+"
    r"(?:of|for|from|by|behind|starring|featuring)\s+(?:the\s+|a\s+|an\s+)?[\"“A-Z0-9]"
)
_PARTICIPLE_EN = re.compile(
    r"\b(?:a|an|the)\s+(?:[a-z][\w'-]*\s+){0,2}[a-z][\w'-]*\s+"
    r"(?:[a-z]+ed|written|known|built|held|run|shown|starring|featuring)\s+(?:by|in|on|at|for|after|from|as)\b"
)
_PREPOSITION = re.compile(r"(?:in|on|at|for|from|by|of|to|with|during|under)\b", re.IGNORECASE)
_GENERIC_VERBS_ZH = frozenset("是 有 为 在 叫 称 算".split())
_ABBREVIATION = re.compile(
    r"(?:^|\s)(?:[A-Z]|Mr|Mrs|Ms|Dr|St|Jr|Sr|Prof|Gen|Col|Lt|Sgt|Capt|Rev|Gov|Sen|Rep|No|Nos|vs|Co|Inc|Ltd|U\.S)\.$"
)
_DEMONYM = re.compile(r"(?:an|ian|ese|ish|ic|i)$")


@dataclass(frozen=True, slots=True)
class Candidate:
    """A bridge entity the anchor names, with the weight of the sentence naming it."""

    name: str
    weight: float


def is_bridge_shaped(part: str) -> bool:
    """Whether the part describes what it asks about through another thing (a relative clause or relation)."""
    if CJK.search(part):
        return _bridge_shaped_zh(part)
    text = part.strip()
    relative = any(m.start() > 0 or not _PREPOSITION.match(text) for m in _RELATIVE_EN.finditer(text))
    return relative or bool(_RELATION_EN.search(text) or _PARTICIPLE_EN.search(text))


def _bridge_shaped_zh(part: str) -> bool:
    """A verb phrase modifying a noun that is itself the modifier of what is asked: V…的 N 的 X."""
    tokens = [t for t in pos_tokens(part) if t.word.strip()]
    verb_seen = False
    for i, token in enumerate(tokens):
        if token.flag.startswith("v") and token.flag != "vn" and token.word not in _GENERIC_VERBS_ZH:
            verb_seen = True
        elif token.word == "的" and verb_seen:
            rest = tokens[i + 1 :]
            for j, following in enumerate(rest[:4]):
                if following.word == "的":
                    return j > 0 and any(is_content(t) for t in rest[:j])
            return False
    return False


def passage_sentences(text: str) -> list[str]:
    """Sentences of a passage; an English period after an initial or a title (L., Mrs., St.) ends none."""
    out: list[str] = []
    for sentence in sentences(text):
        if out and _ABBREVIATION.search(out[-1]):
            out[-1] = f"{out[-1]} {sentence}"
        else:
            out.append(sentence)
    return out


def _sentence_weight(terms: PartTerms, stack: Stack, subject: str) -> float:
    """How strongly a sentence of the anchor talks about the part: relation words count fully, the
    part's entities half, and the anchor's own subject not at all (every sentence is about it)."""
    found = match(terms, [stack])
    entities = [e for e in found.entities if not _names_subject(e, subject)]
    kinds = sum(1 for word in terms.answer_type if stack.hay.contains(word))
    return len(found.generic) + kinds + 0.5 * len(entities)


def _names_subject(entity: str, subject: str) -> bool:
    key, title = normal(entity), normal(subject)
    return bool(key) and (key in title or title in key)


def _positions(sentence: str, terms: PartTerms) -> list[int]:
    low = normal(sentence)
    flat = low.replace(" ", "") if CJK.search(low) else low
    spots: list[int] = []
    for term in (*terms.entities, *terms.generic, *terms.answer_type):
        key = normal(term)
        if CJK.search(key):
            index = flat.find(squeeze(key))
            if index >= 0:
                spots.append(index)
        else:
            found = re.search(rf"(?<![0-9a-zà-ÿ_]){re.escape(stem(key))}", low)
            if found:
                spots.append(found.start())
    return spots


def _modifier(entity: str, sentence: str) -> bool:
    """A one-word name used as an adjective before a common noun ("American comedy film")."""
    if " " in entity or not _DEMONYM.search(entity):
        return False
    return re.search(rf"\b{re.escape(entity)}\s+[a-z]", sentence) is not None


def _with_tails(names: list[str]) -> list[str]:
    """Each name, followed by what comes after its last "of" (CEO of Viglen -> Viglen)."""
    out: list[str] = []
    for name in names:
        out.append(name)
        head, sep, tail = name.rpartition(" of ")
        if sep and head and tail[:1].isupper():
            out.append(tail)
    return out


def bridge_candidates(anchor: Hit, terms: PartTerms, question: str) -> list[Candidate]:
    """Entities the anchor names that the question does not: from the sentences about the part's
    relation first, nearest to the matched words first."""
    asked = squeeze(question)
    subject = subject_of(anchor)
    qualified = is_qualified(anchor)  # "Alien (soundtrack)": the film "Alien" is another document
    ranked: list[tuple[float, int, int, str]] = []
    for order, sentence in enumerate(passage_sentences(anchor.content)):
        weight = _sentence_weight(terms, Stack.of(sentence), subject)
        spots = _positions(sentence, terms)
        plain = normal(sentence)
        flat = plain.replace(" ", "") if CJK.search(plain) else plain
        for entity in _with_tails(entities_in(sentence)):
            key = squeeze(entity)
            if key in asked or key[:1].isdigit() or (same_entity(entity, subject) and not qualified):
                continue
            if _modifier(entity, sentence):
                continue
            index = flat.find(key if CJK.search(flat) else normal(entity))
            distance = min((abs(index - spot) for spot in spots), default=999) if index >= 0 else 999
            ranked.append((-weight, distance, order, entity))
    ranked.sort(key=lambda item: item[:3])
    out: list[Candidate] = []
    for weight, _, _, entity in ranked:
        if not any(same_entity(entity, other.name) for other in out):
            out.append(Candidate(entity, -weight))
    return out
