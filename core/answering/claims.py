"""Claims an answer makes that none of its sources hold: numbers, dates, article numbers, amounts and names.

A number is compared by value after normalising both sides the same way (cn2an turns 六十日 into 60日 and
一千五百元 into 1500元; 1,500 loses its separators), so 六十日 in the answer is supported by 60 日 in a paragraph.
A name is a run of capitalised Latin words ("Adriana Trigiani"; at a sentence's start it is also held when
the run without its first word is, so "Ask Dana Whitfield" is the verb and a held name), a quoted title
(《劳动法》, "Big Stone Gap") or a Latin word with a capital inside (iPhone, McFarland). What the question itself
states (a year it asks about) is never a claim of the answer, nor are citation markers ([2]) and list
numbers. Pure and deterministic; cn2an is the kept library for Chinese numerals
(docs/design.md#claims-checked-against-the-sources).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import cn2an

from core.messages import text
from core.models import ClaimPolicy, Hit
from core.record import UnsupportedClaim

_MARKER = re.compile(r"\[\d+(?:\s*[,，、]\s*\d+)*\]")
# a paragraph's number named in words ("编号:3", "段落 2", "source 1"): the prompt numbers the evidence
_NUMBERED_SOURCE = re.compile(
    r"(?:编号|段落|来源|资料|paragraph|source|passage)\s*[:：#]?\s*\d+", re.IGNORECASE
)
_LIST_NUMBER = re.compile(r"(?m)^\s*(?:\d+[.、)）]|[-*•])\s+")
_THOUSANDS = re.compile(r"(?<![\d.])\d{1,3}(?:,\d{3})+(?![\d,])")
_NUMBER = re.compile(r"(?<![\d.])\d+(?:\.\d+)?(?![\d.]*\d)")
_CN_NUMERAL = "零〇一二两三四五六七八九十百千万亿"
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_NUMERAL_RUN = re.compile(r"[零〇一二两三四五六七八九十百千万亿]+")
_CN_DIGIT = "零〇一二两三四五六七八九十"  # a written number starts with one: not 千万 ("by all means"), 万一 ("in case")
# a lone 一 before its unit is left out: 一个月, 一次, 一天 mostly say "a", "per" (一年 goes unchecked too)
# a number as written, with what follows it (a unit, a currency), for display
_WRITTEN_NUMBER = re.compile(
    rf"(?:第)?(?:(?:\d{{1,3}}(?:,\d{{3}})+|\d+(?:\.\d+)?)(?:万|亿)?|(?!一一)[{_CN_DIGIT}][{_CN_NUMERAL}]+|(?!一)[{_CN_NUMERAL}](?=个月|个工作日|[日天年月周条元倍岁人项次%]))"
    r"(?:\s?(?:%|％|个月|个工作日|个小时|小时|分钟|工作日|[个日天年月周条元倍岁人项次号]|(?:万|亿)?元|days?|weeks?|months?|years?|hours?|CNY|USD|EUR|"
    r"RMB|yuan|dollars?|euros?|percent|per cent))?"
)
_SENTENCE = re.compile(r"(?:[^。！？!?.\n]|\.(?!\s|$))+(?:[。！？!?]+|\.(?=\s|$)|(?=\n)|$)", re.MULTILINE)
_QUOTED = re.compile(r"《([^》]{2,40})》|“([^”]{3,60})”|\"([^\"]{3,60})\"")
_CAPITALISED = re.compile(r"\b[A-Z][a-zA-Z'’-]+(?:\s+(?:of|the|de|van|von|and|&)?\s*[A-Z][a-zA-Z'’-]+)*")
_INNER_CAPITAL = re.compile(r"\b[a-z]+[A-Z][a-zA-Z]*\b|\b(?:Mc|Mac|O')[A-Z][a-z]+\b")
_COMMON = frozenset(
    "The A An This That These Those It Its He She They We You I In On At For From By With As If When While "
    "After Before Under Over According Yes No Not However Also And But Or So Then There Here Each Every "
    "Section Article Chapter Page Source Sources Note Answer Extractive".split()
)


_EN_UNITS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen"
).split()
_EN_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_EN_VALUES = {
    **{word: n for n, word in enumerate(_EN_UNITS)},
    **{word: 20 + 10 * n for n, word in enumerate(_EN_TENS)},
}
_EN_NUMBER_WORD = re.compile(
    rf"\b({'|'.join(_EN_TENS)})[- ]({'|'.join(_EN_UNITS[1:10])})\b|\b({'|'.join(_EN_VALUES)})\b",
    re.IGNORECASE,
)


def _english_number(match: re.Match[str]) -> str:
    if match.group(1):
        return str(_EN_VALUES[match.group(1).lower()] + _EN_VALUES[match.group(2).lower()])
    return str(_EN_VALUES[match.group(3).lower()])


def normalise_numbers(text: str) -> str:
    """The text with Chinese numerals and English number words (five, twenty-one) as Arabic digits and
    thousands separators dropped (60日, 1500元, 5 minutes)."""
    text = _THOUSANDS.sub(lambda match: match.group(0).replace(",", ""), text)
    text = _EN_NUMBER_WORD.sub(_english_number, text)
    with warnings.catch_warnings():  # cn2an warns before it raises on words like 千万 ("by all means")
        warnings.simplefilter("ignore")
        try:
            return str(cn2an.transform(text, "cn2an"))
        except (ValueError, KeyError, IndexError):
            return _NUMERAL_RUN.sub(_run_value, text)  # each run of numerals on its own


def _run_value(match: re.Match[str]) -> str:
    """A run of Chinese numerals as digits, or as it is when it is no number."""
    try:
        value = cn2an.cn2an(match.group(0), "smart")
    except (ValueError, KeyError, IndexError):
        return match.group(0)
    return str(int(value)) if value == int(value) else str(value)


def _values(text: str) -> set[str]:
    """Every number of a normalised text, by value ("60", "1500", "0.5")."""
    return {_value(match.group(0)) for match in _NUMBER.finditer(text)}


def _value(number: str) -> str:
    return number.rstrip("0").rstrip(".") if "." in number else number.lstrip("0") or "0"


def _without_scaffolding(answer: str) -> str:
    """The answer without citation markers and list numbering, which are no claims."""
    return _LIST_NUMBER.sub(" ", _NUMBERED_SOURCE.sub(" ", _MARKER.sub(" ", answer)))


def _sentences(text: str) -> list[str]:
    """The sentences of a text, whitespace squeezed: a line ends one, as do 。！？ and a period before a space."""
    found = (" ".join(match.group(0).split()) for match in _SENTENCE.finditer(text))
    return [sentence for sentence in found if sentence]


def _names(sentence: str) -> list[tuple[str, str]]:
    """Names in an answer sentence, each with the same run without a capitalised opening word ("Ask Dana
    Whitfield" may be the verb "Ask" and the name): quoted titles, capitalised runs, inner-capital words."""
    found = [(next(group for group in match.groups() if group), "") for match in _QUOTED.finditer(sentence)]
    for match in _CAPITALISED.finditer(sentence):
        words = match.group(0).split()
        opening = match.start() == 0 or sentence[: match.start()].rstrip().endswith((":", "：", "-", "•"))
        if opening and words[0] in _COMMON:
            words, opening = words[1:], False
        if not words or (len(words) == 1 and (opening or words[0] in _COMMON)):
            continue
        found.append((" ".join(words), " ".join(words[1:]) if opening else ""))
    found.extend((match.group(0), "") for match in _INNER_CAPITAL.finditer(sentence))
    return list(dict.fromkeys(found))


def _numbers(text: str) -> list[tuple[str, str]]:
    """(as written, value) of each written number of a text, each normalised on its own, so that a sentence
    quoted from a paragraph gives the values the paragraph gives ("9300万" with its 万, "98" beside 一条)."""
    prepared = _EN_NUMBER_WORD.sub(_english_number, text)
    found: list[tuple[str, str]] = []
    for match in _WRITTEN_NUMBER.finditer(prepared):
        fragment = match.group(0).strip()
        found.extend((fragment, value) for value in sorted(_values(normalise_numbers(fragment))))
    return found


def unsupported_claims(
    answer: str, evidence: Sequence[Hit], *, question: str = ""
) -> tuple[UnsupportedClaim, ...]:
    """The numbers and names of the answer that no evidence paragraph (with its document, heading and the
    article it continues) nor the question holds, in order."""
    sources = [
        f"{hit.document_name}\n{hit.heading}\n{hit.location.within}\n{hit.content}" for hit in evidence
    ]
    sources.append(question)
    known_values = {value for text in sources for _, value in _numbers(text)}
    folded = "\n".join(sources).casefold()
    claims: list[UnsupportedClaim] = []
    for sentence in _sentences(_without_scaffolding(answer)):
        for written, value in _numbers(sentence):
            if value not in known_values:
                claims.append(UnsupportedClaim(written, "number", sentence))
        for name, without_opening in _names(sentence):
            if not _held(name, folded) and not (without_opening and _held(without_opening, folded)):
                claims.append(UnsupportedClaim(name, "name", sentence))
    return tuple(dict.fromkeys(claims))


_WORD = re.compile(r"[^\W\d_]{2,}")  # a Latin word of two or more letters


def _held(name: str, folded_sources: str) -> bool:
    """Whether the sources hold the name: as written (case-insensitive), or, for a run of Latin words, every
    word of it (a part of the question quoted back in other words: “Are Christopher Nolan both film
    directors”)."""
    folded = " ".join(name.split()).casefold()
    sources = " ".join(folded_sources.split())
    if folded in sources:
        return True
    words = _WORD.findall(folded)
    if not words or any(CJK.search(word) for word in words):
        return False
    held = set(_WORD.findall(sources))
    return all(word in held for word in words)


def _core_sentence(answer: str) -> str:
    """The answer's first sentence that states something (its core claim), scaffolding removed."""
    for sentence in _sentences(_without_scaffolding(answer)):
        if any(ch.isdigit() or ch.isalpha() for ch in sentence) and not sentence.startswith(("（", "(")):
            return sentence
    return ""


@dataclass(frozen=True, slots=True)
class ClaimCheck:
    """What the claim check makes of an answer: the answer to keep, a line to show after it, the notice's gap."""

    answer: str
    claims: tuple[UnsupportedClaim, ...] = ()
    appended: str = ""  # shown after the streamed answer ("" for none)
    missing: str = ""  # the gap an uncertainty notice names ("" when none is due)


def _key(sentence: str) -> str:
    return " ".join(_without_scaffolding(sentence).split())


def present_claims(
    answer: str, claims: Sequence[UnsupportedClaim], *, policy: ClaimPolicy, lang: str
) -> ClaimCheck:
    """The policy applied: ``mark`` lists the claims under the answer, ``drop_sentence`` removes the sentences
    stating them and says so, ``notice_only`` leaves the text, ``off`` keeps no claims at all; an
    unsupported core claim (the first sentence), or any under ``notice_only``, calls for the uncertainty
    notice."""
    if not claims or policy == "off":
        return ClaimCheck(answer)
    listed = text("claims.separator", lang).join(
        dict.fromkeys(text("claims.quoted", lang, claim=claim.text) for claim in claims)
    )
    core = _core_sentence(answer)
    core_unsupported = any(_key(claim.sentence) == _key(core) for claim in claims) if core else False
    missing = (
        text("claims.missing", lang, claims=listed) if core_unsupported or policy == "notice_only" else ""
    )
    if policy == "notice_only":
        return ClaimCheck(answer, tuple(claims), "", missing)
    if policy == "drop_sentence":
        doomed = {_key(claim.sentence) for claim in claims}
        pieces, last = [], 0
        for match in _SENTENCE.finditer(answer):
            pieces.append(answer[last : match.start()])  # what lies between sentences: newlines, spaces
            if _key(match.group(0)) not in doomed:
                pieces.append(match.group(0))
            last = match.end()
        pieces.append(answer[last:])
        line = text("claims.dropped", lang, claims=listed)
        return ClaimCheck(f"{''.join(pieces).rstrip()}\n\n{line}", tuple(claims), line, missing)
    line = text("claims.marked", lang, claims=listed)
    return ClaimCheck(f"{answer.rstrip()}\n\n{line}", tuple(claims), line, missing)


def check_claims(
    answer: str, evidence: Sequence[Hit], *, question: str, policy: ClaimPolicy, lang: str
) -> ClaimCheck:
    """unsupported_claims, then present_claims: one call for a worker thread (nothing at all when ``off``)."""
    if policy == "off":
        return ClaimCheck(answer)
    claims = unsupported_claims(answer, evidence, question=question)
    return present_claims(answer, claims, policy=policy, lang=lang)
