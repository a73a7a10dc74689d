"""A follow-up keeps its topic: the document the previous answer cited, and where each added term came from (pure).

The rewrite (a model's or the extractive one) resolves "那如果…呢" against the previous questions; what the
conversation was *about* is often clearest in what the previous answer cited: the statute, the handbook, the
page. When a follow-up was rewritten (it depends on the history) and its rewrite has none of the words of the
document the previous answer cited first, that document's name is added to what is searched (not to the
question the answer is written for), so the search stays in that document (docs/design.md#follow-up-rewrite).
Every term the search adds to the follow-up is traced with its origin: an earlier question, an earlier
answer, or a cited document.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.models import Turn
from core.retrieval.versions import version_of
from core.text import has_cjk, normalize_query, salient_terms
from core.trace import CarriedTerm, Origin


def document_topic(name: str) -> str:
    """A cited document as a topic: its name without extension and version date ("行政复议法")."""
    version = version_of(name)
    title = version.title if version is not None else name
    return (
        title.rsplit(".", 1)[0]
        if title.lower().endswith((".md", ".txt", ".pdf", ".docx", ".html"))
        else title
    )


def topic_query(
    question: str, rewritten: str, history: Sequence[Turn]
) -> tuple[str, tuple[CarriedTerm, ...]]:
    """What to search for the question: the rewrite, plus the previous answer's first cited document when the
    question is a follow-up whose rewrite has none of that document's words; and the terms the search adds to
    the question, with their origins. A question the rewrite left alone is searched as it is, unless it refers
    back ("那退货的运费由谁出？") or shares a salient word with the previous question ("哪些商品不能退？"): then
    the rewrite missed its topic, and the cited document still carries it.
    "He" or "it" after a question asking who or which one is the answer (answered_entity)."""
    unchanged = normalize_query(rewritten) == normalize_query(question)
    if not history or (unchanged and not refers_back(question) and not _continues(question, history[-1])):
        return rewritten, ()
    carried = carried_terms(question, rewritten, history)
    topics = [topic for topic in map(document_topic, history[-1].cited) if len(normalize_query(topic)) >= 2]
    answered = answered_entity(history[-1].question, history[-1].cited) if _POINTER.search(question) else None
    if answered is not None:
        topics = [answered, *(topic for topic in topics if topic != answered)]
    if not topics:
        return rewritten, carried
    folded = normalize_query(rewritten)
    words = [normalize_query(term) for term in salient_terms(topics[0])] or [normalize_query(topics[0])]
    if any(word and word in folded for word in words):
        return rewritten, carried
    return f"{rewritten} {topics[0]}", (*carried, CarriedTerm(topics[0], "citation", history[-1].record_id))


# "那…", "那么…", "还有…" opening a question, a pronoun or demonstrative, "…呢？", and their English kin
# one thing or person pointed back at (after a question asking which one, the answer: answered_entity)
_ONE_ZH, _ONE_EN = "它|他|她", "it|its|he|him|his|she|her|hers"
_REFERS_BACK = re.compile(
    rf"^\s*(?:那么|那|还有|另外)|{_ONE_ZH}|其|这个|那个|这些|那些|这类|这种|这项|上述|该|呢\s*[？?]?\s*$|"
    r"^\s*(?:and|what about|how about)\b|"
    rf"\b(?:{_ONE_EN}|they|them|their|this|that|these|those)\b",
    re.IGNORECASE,
)
_POINTER = re.compile(rf"{_ONE_ZH}|\b(?:{_ONE_EN})\b", re.IGNORECASE)
_WHO = r"谁|哪位|\b(?:who|whom|whose)\b"  # the answer is a person, not a word of the question
_ASKS_WHO = re.compile(_WHO, re.IGNORECASE)
_ASKS_WHICH = re.compile(rf"{_WHO}|哪(?:个|家|所|部|本|座|条|一)|\bwhich\b", re.IGNORECASE)


def asks_who(question: str) -> bool:
    """Whether the question asks who (谁, 哪位, who): "he" or 他 after it is its answer, no name it gives."""
    return _ASKS_WHO.search(question) is not None


def answered_entity(asked: str, cited: Sequence[str]) -> str | None:
    """What a question asking which one or who was answered with, when its answer went from a document the
    question names to another: the first cited document the question does not name ("Which university did
    Ralph Hefferline teach at?", citing "Ralph Hefferline" and "Columbia University" -> "Columbia University").
    None for another question, or when the answer cites no document the question names (a statute answering
    "由谁抚养" is no person). "he" or "it" in the next question means that one, not what the question named."""
    if not _ASKS_WHICH.search(asked):
        return None
    topics = [topic for topic in map(document_topic, cited) if len(normalize_query(topic)) >= 2]
    named = [_names(asked, topic) for topic in topics]
    if not any(named):
        return None
    return next((topic for topic, is_named in zip(topics, named, strict=True) if not is_named), None)


def _names(asked: str, title: str) -> bool:
    """Whether the question names the document: its whole title, or (a Latin title) most of its words
    ("Doctor Strange (2016 film)" in "Who directed the film Doctor Strange?", not "Columbia University" in
    "Which university…")."""
    folded, key = normalize_query(asked), normalize_query(title)
    if key in folded:
        return True
    words = [normalize_query(word) for word in salient_terms(title)]
    held = sum(word in folded for word in words)
    return not has_cjk(title) and 2 * held > len(words)


def _continues(question: str, turn: Turn) -> bool:
    """Whether a question the rewrite left alone goes on with the previous one: it shares one of its salient
    words ("哪些商品不能退？" after "网购的商品多少天内可以无理由退货？")."""
    own = {normalize_query(term) for term in salient_terms(question) if len(normalize_query(term)) >= 2}
    return bool(own & {normalize_query(term) for term in salient_terms(turn.question)})


def refers_back(question: str) -> bool:
    """Whether the question points back at the conversation: a discourse "那", a pronoun, a closing "呢"."""
    return _REFERS_BACK.search(question) is not None


def carried_terms(question: str, rewritten: str, history: Sequence[Turn]) -> tuple[CarriedTerm, ...]:
    """Each salient term of the rewrite that the question lacks (the longest form of a word, "行政复议" not
    "行政"), with the latest turn it came from."""
    asked = normalize_query(question)
    terms = [t for t in dict.fromkeys(salient_terms(rewritten)) if len(normalize_query(t)) >= 2]
    longest = [t for t in terms if not any(t != other and t in other for other in terms)]
    carried: list[CarriedTerm] = []
    for term in longest:
        key = normalize_query(term)
        if key in asked:
            continue
        origin = _origin(key, history)
        if origin is not None:
            carried.append(CarriedTerm(term, *origin))
    return tuple(carried)


def _origin(key: str, history: Sequence[Turn]) -> tuple[Origin, int] | None:
    for turn in reversed(history):
        if key in normalize_query(turn.question):
            return "question", turn.record_id
        if any(key in normalize_query(document_topic(name)) for name in turn.cited):
            return "citation", turn.record_id
        if key in normalize_query(turn.answer):
            return "answer", turn.record_id
    return None
