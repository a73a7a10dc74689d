"""Did the user get the gold? Pure matching of gold strings against paragraphs and keywords against answers.

Texts are compared after NFKC normalisation, lower-casing and removal of whitespace, with Chinese numerals
written as digits (cn2an), so "六十日" matches "60日" and "第二十条" matches "第20条". Each run of numeral
characters is converted on its own, the same way in a gold string and in a paragraph: cn2an's whole-text
transform reads words around the numerals too (拾得人 became "10得人" in a paragraph holding 第三百一十七条,
while the gold string, with no numeral of its own, kept 拾) and gives up on some texts as a whole, so a gold
string could fail to match the very paragraph it was copied from. A gold item with a
``file`` only matches paragraphs of a document whose name contains the file name (without its extension).
"""

from __future__ import annotations

import contextlib
import functools
import re
import unicodedata
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bot.evaluation.questions import Gold

_SPACE = re.compile(r"\s+")
_EXTENSION = re.compile(r"\.(md|markdown|txt|html?)$", re.IGNORECASE)
_CJK_NUMERAL = re.compile(r"[零〇一二两三四五六七八九十百千万亿]+")


@dataclass(frozen=True, slots=True)
class Paragraph:
    """What matching needs of a retrieved paragraph."""

    id: str
    document_name: str
    text: str


@functools.lru_cache(maxsize=65536)
def normalise(text: str) -> str:
    """NFKC, lower case, no whitespace, each run of Chinese numerals as digits."""
    flat = _SPACE.sub("", unicodedata.normalize("NFKC", text)).lower()
    return _CJK_NUMERAL.sub(_as_digits, flat)


def _as_digits(run: re.Match[str]) -> str:
    """A run of numeral characters as digits; kept as written when cn2an cannot read it (a lone 千)."""
    import cn2an

    with contextlib.suppress(ValueError, KeyError, IndexError), warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        value = cn2an.cn2an(run.group(0), "smart")
        return str(int(value)) if value == int(value) else str(value)
    return run.group(0)


def _file_stem(name: str) -> str:
    return normalise(_EXTENSION.sub("", name.rsplit("/", 1)[-1]))


def gold_in(gold: Gold, paragraph: Paragraph) -> bool:
    """Whether this paragraph is (one of the places of) the gold item."""
    if gold.file and _file_stem(gold.file) not in normalise(paragraph.document_name):
        return False
    return normalise(gold.must_contain) in normalise(paragraph.text)


def found_gold(gold: Sequence[Gold], paragraphs: Iterable[Paragraph]) -> list[bool]:
    """For each gold item, whether any of the paragraphs holds it."""
    pool = list(paragraphs)
    return [any(gold_in(item, paragraph) for paragraph in pool) for item in gold]


def keywords_present(answer: str, keywords: Sequence[str]) -> list[bool]:
    """For each answer keyword, whether the answer contains it (numbers compared as digits)."""
    text = normalise(answer)
    return [normalise(keyword) in text for keyword in keywords]
