"""Deterministic compaction summary: questions plus the answer sentences that carry facts, within budget.

The summary is plain lines: ``问：…`` / ``Q: …`` for each question and ``- …`` for each kept fact.
A fact is an answer sentence carrying a number, a date, a name (jieba person/place/organisation tags,
capitalised words, acronyms) or a quoted term. Later turns win: a later fact about the same subject
(the same content words, ignoring numbers and words like 更正/actually) with different numbers
replaces the earlier one. When over budget the oldest question lines go first, then the oldest facts.
CPU-bound (jieba).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from adapters.extractive.language.entities import entities_in
from adapters.extractive.language.terms import NUMBER, sentences, squeeze, terms
from core.budget import clip, count_tokens
from core.messages import in_every_language, text
from core.models import Turn
from core.text import detect_language

FACT_PREFIX = "- "
MAX_FACTS_PER_TURN = 6
SAME_SUBJECT = 0.6
CORRECTION_WORDS = frozenset(
    "更正 纠正 修正 调整 改为 改成 现在 目前 最新 实际 实际上 其实 应为 "
    "correction corrected actually now updated update currently instead".split()
)
_CITATION = re.compile(r"\s*\[\d+(?:\s*[,，]\s*\d+)*\]")
_CN_NUMBER = re.compile(r"[零一二两三四五六七八九十百千万]+[个种天年月日次位名条项元岁周倍层号届]")
_QUOTED = re.compile(r"[「『“《\"][^」』”》\"]{1,40}[」』”》\"]")
_NOTICE = re.compile(r"^(?:注意[:：]|note[:：]|⚠)", re.IGNORECASE)
_HEADING = re.compile(r"^(?:【.*】|On \".*\":)$")


@dataclass(frozen=True, slots=True)
class Entry:
    """One summary line; facts carry their subject key and numbers for conflict checks."""

    text: str
    is_fact: bool
    key: frozenset[str] = frozenset()
    numbers: frozenset[str] = frozenset()


def _fact(text: str) -> Entry:
    numbers = frozenset(NUMBER.findall(text)) | frozenset(_CN_NUMBER.findall(text))
    key = frozenset(t for t in terms(text) if not NUMBER.fullmatch(t) and t not in CORRECTION_WORDS)
    return Entry(FACT_PREFIX + text, True, key, numbers)


def _parse(previous: str) -> list[Entry]:
    entries: list[Entry] = []
    for line in previous.splitlines():
        line = line.strip()
        if not line:
            continue
        entries.append(
            _fact(line[len(FACT_PREFIX) :]) if line.startswith(FACT_PREFIX) else Entry(line, False)
        )
    return entries


def carries_fact(sentence: str) -> bool:
    """Whether a sentence carries a number, a date, a name or a quoted term."""
    if re.search(r"\d", sentence) or _CN_NUMBER.search(sentence) or _QUOTED.search(sentence):
        return True
    return bool(entities_in(sentence))


def fact_sentences(answer: str) -> list[str]:
    """The answer's sentences that carry facts (labels, headings, notices and citation marks removed)."""
    out: list[str] = []
    labels = {squeeze(label) for label in in_every_language("extractive.label")}
    for raw in answer.splitlines():
        line = _CITATION.sub("", raw).strip().lstrip("-*•> ").strip()
        if not line or squeeze(line) in labels or _NOTICE.match(line) or _HEADING.match(line):
            continue
        for sentence in sentences(line):
            if len(squeeze(sentence)) >= 4 and carries_fact(sentence) and sentence not in out:
                out.append(sentence)
    return out


def _conflicts(old: Entry, new: Entry) -> bool:
    """Same subject restated: identical text, or the same content words with different numbers."""
    if not old.is_fact:
        return False
    if squeeze(old.text) == squeeze(new.text):
        return True
    if not old.numbers or not new.numbers or old.numbers == new.numbers or not old.key or not new.key:
        return False
    overlap = len(old.key & new.key) / len(old.key | new.key)
    return overlap >= SAME_SUBJECT


def summarise_turns(previous: str, turns: Sequence[Turn], *, max_tokens: int) -> str:
    """The previous summary merged with the turns, later facts winning, within max_tokens."""
    entries = _parse(previous)
    for turn in turns:
        prefix = text("extractive.summary_question", detect_language(turn.question + turn.answer))
        earlier = list(entries)
        added: list[Entry] = [Entry(prefix + " ".join(turn.question.split()), False)]
        for sentence in fact_sentences(turn.answer)[:MAX_FACTS_PER_TURN]:
            fact = _fact(sentence)
            earlier = [e for e in earlier if not _conflicts(e, fact)]
            added.append(fact)
        entries = earlier + added
    return _fit(entries, max_tokens)


def _fit(entries: list[Entry], max_tokens: int) -> str:
    """Drop old lines until the rest fits (questions before facts, the newest question last of all);
    clip a lone line that is still too long."""
    lines = list(entries)
    while len(lines) > 1 and count_tokens("\n".join(e.text for e in lines)) > max_tokens:
        questions = [i for i, e in enumerate(lines) if not e.is_fact]
        lines.pop(questions[0] if len(questions) > 1 else 0)
    text = "\n".join(e.text for e in lines)
    return clip(text, max_tokens) if count_tokens(text) > max_tokens else text
