"""Key-facts check: numbers, dates, codes and quoted names a summary dropped, appended as one fixed line."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from core.budget import clip, count_tokens
from core.messages import in_every_language, text

FACT_SEPARATOR = "; "

_UNITS = (
    "个工作日|个月|工作日|万元|亿元|千元|千米|千克|公里|公斤|小时|分钟|元|万|亿|千|百|年|月|日|天|周|秒"
    "|人|名|位|次|项|条|款|章|节|页|个|岁|米|吨|克|件|台|套|户|家|所|倍|%|％|‰"
    r"|(?:days?|weeks?|months?|years?|hours?|minutes?|percent|people|users|items|pages)\b"
)
_MONTHS = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.?"
_DATE = (
    r"\d{4}\s*年\s*\d{1,2}\s*月(?:\s*\d{1,2}\s*[日号])?"
    r"|\d{4}[-/.]\d{1,2}[-/.]\d{1,2}"
    r"|\d{1,2}\s*月\s*\d{1,2}\s*[日号]"
    r"|\d{4}\s*年度?"
    rf"|{_MONTHS}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}"
    rf"|\d{{1,2}}\s+{_MONTHS}\s+\d{{4}}"
)
# An identifier mixing letters and digits: PRJ-2031, ISO9001, gpt-4o, COVID-19.
_CODE = r"(?=[A-Za-z0-9_-]*\d)(?=[A-Za-z0-9_-]*[A-Za-z])[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*"
_NUMBER = rf"\d+(?:,\d{{3}})*(?:\.\d+)?(?:\s*(?:{_UNITS}))?"
_NUMERIC = re.compile(rf"(?<![A-Za-z0-9.])(?:{_DATE}|{_CODE}|{_NUMBER})")
_QUOTED = re.compile(
    r"「[^「」\n]{1,40}」|『[^『』\n]{1,40}』|“[^“”\n]{1,40}”|《[^《》\n]{1,60}》|\"[^\"\n]{1,40}\""
)
_SENTENCE_PUNCTUATION = re.compile(r"[。!?;,!?;]")
_DIGIT_COMMA = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_SPACE = re.compile(r"\s+")


def _normal(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text).lower()
    return _DIGIT_COMMA.sub("", _SPACE.sub("", folded))


def _is_noise_number(fact: str) -> bool:
    """A bare one-digit number ("1." list markers, "2 of them") carries no fact worth keeping."""
    return fact.isdigit() and len(fact) == 1


def extract_key_facts(text: str) -> list[str]:
    """Dates, numbers (with their unit), alphanumeric codes and quoted names, in order, deduplicated."""
    found: list[tuple[int, str]] = []
    for match in _NUMERIC.finditer(text):
        fact = match.group(0).strip()
        if not _is_noise_number(fact):
            found.append((match.start(), fact))
    for match in _QUOTED.finditer(text):
        inner = match.group(0)[1:-1].strip()
        if inner and not _SENTENCE_PUNCTUATION.search(inner):
            found.append((match.start(), match.group(0)))
    facts: dict[str, str] = {}
    for _, fact in sorted(found, key=lambda item: item[0]):
        facts.setdefault(_normal(fact), fact)
    return list(facts.values())


def _present(fact: str, normal_summary: str) -> bool:
    if fact[0] in '「『“《"':
        return _normal(fact[1:-1]) in normal_summary
    key = _normal(fact)
    before = r"(?<![0-9.])" if key[0].isdigit() else r"(?<![a-z0-9])"
    after = r"(?![0-9])" if key[-1].isdigit() else ""
    return re.search(before + re.escape(key) + after, normal_summary) is not None


def missing_key_facts(sources: Iterable[str], summary: str) -> list[str]:
    """The key facts of the sources (in order of appearance) that the summary text does not contain."""
    normal_summary = _normal(summary)
    seen: dict[str, str] = {}
    for source in sources:
        for fact in extract_key_facts(source):
            seen.setdefault(_normal(fact), fact)
    return [fact for fact in seen.values() if not _present(fact, normal_summary)]


def split_key_facts(summary: str) -> tuple[str, list[str]]:
    """The summary without its key-facts lines, and the facts those lines listed, in order."""
    body: list[str] = []
    facts: dict[str, str] = {}
    labels = in_every_language("compaction.key_facts_label")
    for line in summary.splitlines():
        label = next((label for label in labels if line.startswith(label)), None)
        if label is None:
            body.append(line)
            continue
        for fact in line[len(label) :].split(FACT_SEPARATOR.strip()):
            if fact.strip():
                facts.setdefault(_normal(fact), fact.strip())
    return "\n".join(body).strip(), list(facts.values())


def with_key_facts(body: str, facts: Sequence[str], *, budget: int, lang: str) -> str:
    """The body within budget tokens followed by one line of the facts, first facts first.

    The body's start is never cut for the line: when both do not fit, the line gets at most a quarter of
    the budget (whole facts only) and only the body's end is clipped.
    """
    body = body.strip()
    if not facts:
        return clip(body, budget, lang=lang)
    label = text("compaction.key_facts_label", lang)
    line_tokens = count_tokens("\n" + label + FACT_SEPARATOR.join(facts))
    room = max(budget - count_tokens(body), min(line_tokens, budget // 4))
    if room > budget - count_tokens(body):
        body = clip(body, budget - room, lang=lang)

    def joined(count: int) -> str:
        return f"{body}\n{label}{FACT_SEPARATOR.join(facts[:count])}"

    low, high = 0, len(facts)  # the most leading facts that fit: a binary search, as clip() does
    while low < high:
        middle = (low + high + 1) // 2
        if count_tokens(joined(middle)) <= budget:
            low = middle
        else:
            high = middle - 1
    return joined(low) if low else body


def merge_key_facts(
    summary: str, *, previous: str, batch_texts: Sequence[str], budget: int, lang: str
) -> str:
    """The key-facts check after one summary call: a single deterministic facts line under the summary.

    The line keeps the previous line's facts verbatim and in order (durable facts, whatever the model did
    with them), then adds the facts of the batch, and of the previous summary's text, that the new summary
    dropped. A facts line the model echoed is replaced by this one.
    """
    body, _ = split_key_facts(summary)
    previous_body, durable = split_key_facts(previous)
    known = {_normal(fact) for fact in durable}
    dropped = [
        fact for fact in missing_key_facts([*batch_texts, previous_body], body) if _normal(fact) not in known
    ]
    return with_key_facts(body, [*durable, *dropped], budget=budget, lang=lang)
