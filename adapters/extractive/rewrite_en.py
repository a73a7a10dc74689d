"""English follow-ups: pronouns and possessives (it, its, he, his, she, her, they…) resolved against the
previous question, and a condition asked on its own ("And for low-risk patients?", "What about a P2
incident?") put back into it.

Hand-written because no offline library here resolves English references without a model; the rules are
the ones docs/design.md#follow-up-rewrite lists. Pure.
"""

from __future__ import annotations

import re

from adapters.extractive.language.terms import Token, fold, is_content, is_stop
from core.retrieval.topic import asks_who

_PRONOUN_EN = re.compile(
    r"\b(it|they|them|its|their|this|that|these|those|he|him|his|she|her)\b", re.IGNORECASE
)
_SINGULAR_EN = frozenset("it its this that he him his she her".split())  # point at one named thing or person
_POSSESSIVE_EN = frozenset({"its", "their"})  # before a noun: "its side effects" -> "the side effects of …"
# a person: only a name of the previous question ("When did he die?"), never a drug or a policy ("Can she take
# it?"); his/her before a noun become "Marie Curie's", so a verb after the noun stays where it was
_PERSON_EN = frozenset("he him his she her".split())
_CONDITION_EN = re.compile(
    r"^\s*(?:and|but|or)?\s*(for|in|with|at|on|during|after|before|without|under|over|from|by)\s+(.+?)\s*[?.!]*\s*$",
    re.IGNORECASE,
)
_NOT_A_BARE_PHRASE_EN = frozenset(
    "what which who whom whose when where why how is are was were be been do does did can could should "
    "will would has have had may might must it they this that these those".split()
)
MAX_CONDITION_WORDS = 6
_PHRASE_AFTER_EN = re.compile(r"\s+([A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*)*)")


def content_span_en(question: str) -> str:
    """The stretch of the question from its first to its last content word ("basic data types in Java")."""
    words = list(re.finditer(r"[A-Za-z0-9][\w'+#.-]*", question))
    content = [
        m for m in words if is_content(Token(m.group(0), "eng")) and not _PRONOUN_EN.fullmatch(m.group(0))
    ]
    if not content:
        return ""
    return question[content[0].start() : content[-1].end()].strip(" ?.!,;:")


def referent_en(previous: str, pronoun: str, span: str) -> str:
    """What an English pronoun points back to: for a singular one (it, its, this, that) the name the
    previous question mentions (a capitalised run after its first word), else what it asks "of"
    ("aspirin" in "the dose of aspirin for adults"); otherwise, and for plurals, its content span."""
    if pronoun.lower() not in _SINGULAR_EN:
        return span
    name = name_in(previous)
    if name:
        return name
    of = re.search(r"\bof\s+((?:[A-Za-z][\w-]*\s*)+)", span)
    if of:
        asked = of.group(1).split()
        stop = next((i for i, word in enumerate(asked) if is_stop(word)), len(asked))
        if stop:
            return " ".join(asked[:stop])
    return span


def name_in(previous: str) -> str:
    """The first name the question mentions: a capitalised run after its first word ("" for none)."""
    words = list(re.finditer(r"[A-Za-z][\w'+#.-]*", previous))
    names: list[list[str]] = []
    for index, word in enumerate(words):
        text = word.group(0)
        if index > 0 and text[0].isupper() and not is_stop(text):
            if names and words[index - 1].group(0) == names[-1][-1]:
                names[-1].append(text)
            else:
                names.append([text])
    return " ".join(names[0]) if names else ""


def replace_pronouns_en(question: str, subject: str, previous: str = "") -> str | None:
    """The question with each pronoun that refers back replaced by its referent (referent_en); "its side
    effects" becomes "the side effects of …". None when nothing refers back."""
    matches = [m for m in _PRONOUN_EN.finditer(question) if _refers_back(question, m)]
    if not matches:
        return None
    out = question
    for match in reversed(matches):
        word = match.group(1).lower()
        noun = _noun_after(question[match.end() :])
        if word in _PERSON_EN and previous and (not name_in(previous) or asks_who(previous)):
            continue  # "Can she take it?" after a question on aspirin, "he" after "Who wrote Dune?": no name
        referent = referent_en(previous, word, subject) if previous else subject
        if word in ("his", "her") and noun:
            out = out[: match.start()] + f"{referent}'s" + out[match.end() :]
        elif word in _POSSESSIVE_EN and noun:
            replacement = f"the {noun[0]} of {referent}"
            out = out[: match.start()] + replacement + out[match.end() + noun[1] :]
        elif word in ("this", "that", "these", "those") and noun and _looks_like_noun(noun[0].split()[0]):
            head = noun[0]
            replacement = referent if fold(head) in fold(referent) else f"the {head} of {referent}"
            out = out[: match.start()] + replacement + out[match.end() + noun[1] :]
        else:
            out = out[: match.start()] + referent + out[match.end() :]
    return out


def points_back_en(question: str) -> bool:
    """Whether an English question holds a pronoun that refers back (what replace_pronouns_en replaces)."""
    return any(_refers_back(question, m) for m in _PRONOUN_EN.finditer(question))


def _refers_back(question: str, match: re.Match[str]) -> bool:
    """'that' right after a content word is a relative pronoun ("the policy that applies"), not a reference."""
    if match.group(1).lower() != "that":
        return True
    before = re.findall(r"[A-Za-z][\w'-]*", question[: match.start()])
    return not before or is_stop(before[-1])


def _looks_like_noun(word: str) -> bool:
    return not is_stop(word) and not word.lower().endswith(("ed", "ing", "ly"))


def condition_en(question: str, previous: str) -> str | None:
    """ "And for low-risk patients?" after "What is the starting dose for high-risk patients?" -> the previous
    question with its "for …" phrase replaced (or the phrase added when it had none)."""
    match = _CONDITION_EN.match(question)
    if not match:
        return None
    preposition, phrase = match.group(1), match.group(2).strip()
    words = phrase.split()
    if (
        not words
        or len(words) > MAX_CONDITION_WORDS
        or any(w.lower() in _NOT_A_BARE_PHRASE_EN for w in words)
    ):
        return None
    stem = previous.strip().rstrip("?.! ")
    swapped = swap_same_kind(previous, phrase)
    if swapped is not None:
        return swapped
    same = re.search(rf"\b{re.escape(preposition)}\s+[^,;?.!]+$", stem, re.IGNORECASE)
    if same:
        return f"{stem[: same.start()]}{preposition.lower()} {phrase}?"
    return f"{stem} {preposition.lower()} {phrase}?"


def swap_same_kind(previous: str, phrase: str) -> str | None:
    """The previous question with its noun phrase of the same head noun replaced by the phrase:
    "a P2 incident" for "a P1 incident", "low-risk patients" for "high-risk patients", as many words before
    the head as the phrase has ("sick leave" for the "annual leave" of "Who approves annual leave?"); None
    without one."""
    own = [w for w in re.findall(r"[A-Za-z0-9][\w'+#.-]*", phrase) if not is_stop(w)]
    if not own:
        return None
    head = own[-1].lower()
    words = list(re.finditer(r"[A-Za-z0-9][\w'+#.-]*", previous))
    for index, word in enumerate(words):
        if word.group(0).lower() != head:
            continue
        # "sick leave" replaces one word before "leave" ("annual"), not "approves annual"; a bare head the
        # whole run of content words before it
        reach = len(own) - 1 if len(own) > 1 else index
        start = index
        while start > 0 and not is_stop(words[start - 1].group(0)) and index - start < reach:
            start -= 1
        return previous[: words[start].start()] + " ".join(own) + previous[word.end() :]
    return None


def _noun_after(after: str) -> tuple[str, int] | None:
    """The noun phrase right after a possessive or demonstrative ("side effects" in " side effects?"): its
    words up to the first stop word, and where it ends in ``after``."""
    match = _PHRASE_AFTER_EN.match(after)
    if not match:
        return None
    words: list[str] = []
    end = match.start(1)
    for word in re.finditer(r"[A-Za-z][\w-]*", match.group(1)):
        if is_stop(word.group(0)):
            break
        words.append(word.group(0))
        end = match.start(1) + word.end()
    return (" ".join(words), end) if words else None
