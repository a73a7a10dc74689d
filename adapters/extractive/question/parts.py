"""Splitting a compound question into parts, each answerable on its own (pure; jieba, so CPU-bound).

Patterns, applied in this order:

1. Enumerations: ``1. … 2. …``, ``（1）…（2）…``, ``一是…二是…``, ``第一，…第二，…``; a preamble with
   content words of its own is kept in front of every item.
2. Hard separators: ``；`` / ``;``, a sentence end (``？！。?!``) followed by more text, ``以及``,
   ``并且``, ``另外``, ``此外``, ``同时``, ``as well as``, ``and also``.
3. ``和/与/及/跟/或/还是`` (``and``/``or`` in English) between two clauses (both sides ask something or
   state a predicate) splits into the clauses; between two noun phrases (``X 和 Y 哪个…``,
   ``X 与 Y 分别…``, ``X、Y 和 Z 的…``) the rest of the question is distributed over each entity, one
   part per compared entity. English noun conjunctions are distributed only with a comparison or
   distribution marker (``which``, ``difference between``, ``compare``, ``respectively``, ``each``).

Parts without content words of their own are dropped; a question that yields fewer than two parts is
returned whole.
"""

from __future__ import annotations

import re

from adapters.extractive.language.terms import (
    COMPARISON_WORDS,
    Token,
    fold,
    is_content,
    is_nounish,
    pos_tokens,
)
from adapters.extractive.question.comparison import split_compared_en
from core.text import is_chinese

_ENUMERATION = re.compile(
    r"(?:(?:^|(?<=[\s，,；;。？?！!：:]))(?:[（(]?[1-9][）)]|[1-9][.、．](?!\d)))"
    r"|(?:[一二三四五六七八九]是|第[一二三四五六七八九][，,、：:])"
)
_HARD_ZH = re.compile(r"[；;]|(?<=[？?！!。])(?=\S)|以及|并且|另外|此外|同时")
_COMMA = re.compile(r"([，,])")
_HARD_EN = re.compile(
    r"\s*;\s*|(?<=[?!])\s+(?=\S)|\s+as well as\s+|,?\s+and also\s+"
    r"|,\s+but\s+(?=(?:what|where|when|who|which|how|why)\b)",
    re.IGNORECASE,
)
_CONJUNCTIONS_ZH = frozenset("和 与 及 跟 同 或 或者 还是 比".split())
_INTERROGATIVES_ZH = re.compile(
    r"哪|什么|多少|几|多久|多长|如何|怎么|怎样|为什么|为何|是否|吗|呢|谁|何时|有没有"
)
_INTERROGATIVES_EN = re.compile(
    r"^(?:what|how|when|where|which|who|whom|whose|why|is|are|was|were|do|does|did|can|could|should|must|"
    r"will|would|may)\b",
    re.IGNORECASE,
)
# after "and", a clause asking through a preposition ("…, and on which floor does that group sit?")
_PREPOSITION_WH_EN = re.compile(
    r"^(?:on|in|at|for|from|to|with|by|of|during|since|until|under|after|before)\s+(?:what|which)\b",
    re.IGNORECASE,
)
_DISTRIBUTE_EN = re.compile(
    r"\b(?:which|difference|differences|compare|compared|comparison|versus|vs\.?|respectively|each|both)\b",
    re.IGNORECASE,
)
_LEADING_FILLER = re.compile(
    r"^(?:请问|请分别说明|请分别|请说明|请|分别说明|分别|还有|另外|此外|同时|那么|并且|以及|and|also|as well as)\s*",
    re.IGNORECASE,
)
_EDGE_PUNCT = " \t\r\n，,、；;：:。.？?！!"
_ENGLISH_WORD = re.compile(r"[A-Za-z0-9][\w'+#.-]*")


def split_question(question: str) -> list[str]:
    """The parts of a compound question (the whole question when it has only one part)."""
    text = question.strip()
    english = not is_chinese(text)
    parts: list[str] = []
    for item in _enumeration(text):
        for segment in _split_commas((_HARD_EN if english else _HARD_ZH).split(item), english=english):
            parts.extend(_split_conjunctions_en(segment) if english else _split_conjunctions_zh(segment))
    cleaned: list[str] = []
    for part in parts:
        part = _clean(part)
        if part and has_content(part) and part not in cleaned:
            cleaned.append(part)
    return cleaned if len(cleaned) > 1 else [text]


def question_parts(question: str) -> list[str]:
    """split_question() with edge punctuation removed from every part (for gap texts and queries)."""
    return [part.strip(_EDGE_PUNCT) or part for part in split_question(question)]


def has_content(text: str) -> bool:
    """Whether the text has at least one content word of its own."""
    return any(is_content(t) for t in pos_tokens(text))


def _clean(part: str) -> str:
    part = part.strip(_EDGE_PUNCT)
    previous = None
    while previous != part:
        previous = part
        part = _LEADING_FILLER.sub("", part).strip(_EDGE_PUNCT)
    return part


def _enumeration(text: str) -> list[str]:
    """Items of an enumeration (with a contentful preamble prefixed), or [text]."""
    marks = list(_ENUMERATION.finditer(text))
    if len(marks) < 2:
        return [text]
    preamble = _clean(text[: marks[0].start()])
    items = [
        text[mark.end() : marks[i + 1].start() if i + 1 < len(marks) else len(text)]
        for i, mark in enumerate(marks)
    ]
    prefix = preamble + " " if preamble and has_content(preamble) else ""
    return [prefix + _clean(item) for item in items if _clean(item)]


def _asks(text: str, *, english: bool) -> bool:
    """Whether the text asks something of its own (has an interrogative)."""
    if english:
        return bool(_INTERROGATIVES_EN.match(text.strip()))
    return bool(_INTERROGATIVES_ZH.search(text))


def _split_commas(segments: list[str], *, english: bool) -> list[str]:
    """Split at commas between clauses that each ask something ("密码多久更换，电脑几年换")."""
    out: list[str] = []
    for segment in segments:
        pieces = _COMMA.split(segment)
        current = pieces[0]
        for comma, piece in zip(pieces[1::2], pieces[2::2], strict=True):
            if _asks(current, english=english) and _asks(piece, english=english):
                out.append(current)
                current = piece
            else:
                current += comma + piece
        out.append(current)
    return out


def _clause_like_zh(tokens: list[Token]) -> bool:
    text = "".join(t.word for t in tokens)
    if _INTERROGATIVES_ZH.search(text):
        return True
    has_verb = any(t.flag.startswith("v") and t.flag != "vn" for t in tokens)
    return has_verb and any(is_nounish(t) for t in tokens)


def _split_conjunctions_zh(segment: str) -> list[str]:
    tokens = [t for t in pos_tokens(segment)]
    for i, token in enumerate(tokens):
        if token.word not in _CONJUNCTIONS_ZH or i == 0 or i == len(tokens) - 1:
            continue
        left, right = tokens[:i], tokens[i + 1 :]
        if _clause_like_zh(left) and _clause_like_zh(right) and _ends_clause(left):
            return [_join(left), *_split_conjunctions_zh(_join(right))]
        distributed = _distribute_zh(left, right)
        if distributed:
            return distributed
    return [segment]


def _ends_clause(left: list[Token]) -> bool:
    """A clause on the left must end with something other than a bare noun phrase."""
    text = _join(left).strip(_EDGE_PUNCT)
    return bool(_INTERROGATIVES_ZH.search(text[-4:])) or not all(
        is_nounish(t) or not t.word.strip() for t in left[-2:]
    )


def _join(tokens: list[Token]) -> str:
    return "".join(t.word for t in tokens)


def _noun_run_end(tokens: list[Token]) -> int:
    """Start index of the noun phrase ending the tokens (content words ending on a noun); len() when none."""
    if not tokens or not is_nounish(tokens[-1]):
        return len(tokens)
    start = len(tokens)
    while start > 0 and (is_content(tokens[start - 1]) or not tokens[start - 1].word.strip()):
        start -= 1
    while start < len(tokens) and not tokens[start].word.strip():
        start += 1
    return start


def _entities_before(left: list[Token]) -> tuple[list[Token], list[str]]:
    """(prefix tokens, entities) for a list ``X、Y`` of noun phrases at the end of left."""
    entities: list[str] = []
    end = len(left)
    while end > 0 and not left[end - 1].word.strip():
        end -= 1
    while True:
        start = _noun_run_end(left[:end])
        if start == end:
            break
        entities.insert(0, _join(left[start:end]).strip())
        end = start
        if end > 0 and left[end - 1].word in ("、", ",", "，"):
            end -= 1
            continue
        break
    return left[:end], entities


def _distribute_zh(left: list[Token], right: list[Token]) -> list[str]:
    prefix, entities = _entities_before(left)
    stop = 0
    while stop < len(right) and (is_content(right[stop]) or (stop == 0 and not right[stop].word.strip())):
        stop += 1
    while stop > 0 and not is_nounish(right[stop - 1]):
        stop -= 1
    if not entities or stop == 0:
        return []
    entities.append(_join(right[:stop]).strip())
    suffix = _join(right[stop:])
    head = _join(prefix)
    return [_drop_distribution_words(head + entity + suffix) for entity in entities]


def _drop_distribution_words(part: str) -> str:
    return re.sub(r"分别|各自", "", part)


def _split_conjunctions_en(segment: str) -> list[str]:
    compared = split_compared_en(segment)
    if compared:
        return compared
    match = re.search(r"\s+(?:and|or)\s+", segment, re.IGNORECASE)
    if not match:
        return [segment]
    left, right = segment[: match.start()], segment[match.end() :]
    if _INTERROGATIVES_EN.match(right.strip()) or _PREPOSITION_WH_EN.match(right.strip()):
        return [left, *_split_conjunctions_en(right)]
    if not _DISTRIBUTE_EN.search(segment):
        return [segment]
    before = _ENGLISH_WORD.findall(left)
    after_match = _ENGLISH_WORD.match(right.strip())
    if not before or not after_match:
        return [segment]
    x, y = before[-1], after_match.group(0)
    if fold(x) in COMPARISON_WORDS or fold(y) in COMPARISON_WORDS or x[:1].isupper() or y[:1].isupper():
        return [segment]  # compared words, or names split_compared_en could not delimit
    head = left[: left.rfind(x)]
    tail = right.strip()[len(y) :]
    return [head + x + tail, head + y + tail]
