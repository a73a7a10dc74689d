"""Text helpers: language detection, normalisation, jieba tokenisation, salient terms, a statute's article numbers.

Search tokens without jieba's HMM (the keyword index's tokens, for every chunk ingested and every
keyword query) come from rjieba, the Rust port of jieba with the same dictionary and algorithm: the same
words 5-30 times faster (tested against jieba on Chinese, English and mixed text; with the HMM on, the two
differ on Latin text such as "u.s" or "e-mail", so that path stays on jieba).

A word negated by its first character (未成年人, 非营利, 非机动车: 未 / 非 and at least two more characters
form a dictionary word) is a different thing from its tail, so its search-mode pieces starting right after
the 未 / 非 (成年, 成年人; 营利; 机动, 机动车) are not emitted: "成年人" no longer matches every chunk about
未成年人 (``negated_word``, also the extractive engine's rule for matching a term).

Accented Latin letters are folded to their base letters before cutting (``fold_accents``): jieba's word
pattern is ASCII, so it cut "malgré" into "malgr" + "é" and "Müller" into three pieces. The table comes from
the standard library's canonical decomposition, plus the few letters that have none (ß, æ, ø, ł, …); a
transliteration library would also romanise CJK text, which must stay as it is.
"""

from __future__ import annotations

import functools
import re
import unicodedata

import rjieba

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# A statute's numbered parts: 第十三条, 第一百三十三条之一, 第２条; 第三章, 第二编 build on the same numerals
NUMERAL = "0-9０-９零〇一二两三四五六七八九十百千"
ARTICLE_NUMBER = rf"第[{NUMERAL}]+条(?:之[一二三四五六七八九十]+)?"
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
_PUNCT_OR_SPACE = re.compile(r"[\s\W_]+", re.UNICODE)
_LATIN_RANGES = ((0x00C0, 0x024F), (0x1E00, 0x1EFF))  # Latin-1 Supplement to Extended-B, Extended Additional
_UNDECOMPOSED = dict(
    zip("ßæÆœŒøØđĐłŁþÞðÐıħĦ", "ss ae AE oe OE o O d D l L th Th d D i h H".split(), strict=True)
)


def _accent_table() -> dict[int, str]:
    """Each accented Latin letter mapped to its base letters (é -> e, ß -> ss); other characters untouched."""
    table: dict[int, str] = {}
    for start, end in _LATIN_RANGES:
        for code in range(start, end + 1):
            char = chr(code)
            decomposed = unicodedata.normalize("NFD", char)
            base, marks = decomposed[0], decomposed[1:]
            if base.isascii() and base.isalpha() and marks and all(unicodedata.combining(m) for m in marks):
                table[code] = base
    table.update((ord(char), base) for char, base in _UNDECOMPOSED.items())
    return table


_ACCENTS = _accent_table()


def fold_accents(text: str) -> str:
    """Accented Latin letters as their base letters ("Le roi malgré lui" -> "Le roi malgre lui"); CJK,
    digits and punctuation unchanged, so lengths may grow only by the letters that fold to two (ß -> ss)."""
    return text.translate(_ACCENTS)


STOP_WORDS_ZH = frozenset(
    (
        "的 了 和 与 及 或 是 在 有 为 对 把 被 将 从 以 而 及其 就 都 也 还 又 并 并且 以及 分别 请 吗 呢 吧 啊 么 "
        "什么 怎么 如何 怎样 哪些 哪个 多少 几 是否 能否 可以 应当 应该 需要 一下 说明 介绍 告诉 我 你 他 她 它 "
        "我们 你们 他们 它们 这 那 这个 那个 这些 那些 其 该 上述 之 个 中 上 下 时 后 前 等 等等 关于 具体 一般"
    ).split()
)
STOP_WORDS_EN = frozenset(
    (
        "a an the and or of to in on at for with by from is are was were be been being do does did how what "
        "which who whom whose when where why can could should would will shall may might must it its they them "
        "their this that these those there here as about into than then so if not no yes please tell me my our "
        "we you your i much many each both also and/or vs"
    ).split()
)


def has_cjk(text: str) -> bool:
    """Whether the text holds any CJK character."""
    return _CJK.search(text) is not None


def is_chinese(text: str) -> bool:
    """Whether the text has a meaningful share of CJK characters (what detect_language calls Chinese)."""
    if not text:
        return False
    cjk = len(_CJK.findall(text))
    latin = sum(len(w) for w in _LATIN_WORD.findall(text)) / 4  # ~4 latin letters carry a CJK char's weight
    return bool(cjk) and cjk >= latin * 0.5


def detect_language(text: str) -> str:
    """'zh' when the text has a meaningful share of CJK characters, otherwise 'en'."""
    return "zh" if is_chinese(text) else "en"


def normalize_query(text: str) -> str:
    """Lowercase and drop whitespace and punctuation: the identity used to never run a query twice."""
    folded = unicodedata.normalize("NFKC", text).lower()
    return _PUNCT_OR_SPACE.sub("", folded)


def shortened(text: str, limit: int) -> str:
    """The text on one line (whitespace collapsed), cut to at most limit characters with "…" when longer."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def compact_length(text: str) -> int:
    """Characters without whitespace (the query-length tier measure)."""
    return len(re.sub(r"\s+", "", text))


@functools.cache
def _jieba() -> object:
    import logging

    import jieba

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    return jieba


def fold(text: str) -> str:
    """NFKC, lowercase and accents folded: the form search tokens and the extractive engine's comparisons use."""
    return fold_accents(unicodedata.normalize("NFKC", text).lower())


NEGATING = ("未", "非")


def negated_word(word: str) -> bool:
    """Whether the word is its tail negated (未成年人, 非营利): 未 / 非 and two more characters form a word."""
    return len(word) >= 3 and word.startswith(NEGATING) and bool(rjieba.has_word(word[:3]))


def _search_words(folded: str) -> list[str]:
    """rjieba's search-mode words, without the pieces of a negated word that start after its 未 / 非 (their
    offsets are read only for a text holding 未 or 非: the plain cut is twice as fast)."""
    if not any(char in folded for char in NEGATING):
        words: list[str] = rjieba.cut_for_search(folded, False)
        return words
    pieces = rjieba.tokenize(folded, "search", False)
    tails: dict[int, int] = {}
    for word, start, end in pieces:
        if negated_word(word):
            tails[start + 1] = max(end, tails.get(start + 1, end))
    if not tails:
        return [word for word, _, _ in pieces]
    return [word for word, start, end in pieces if not (start in tails and end <= tails[start])]


def tokenize(text: str, *, new_words: bool = True) -> list[str]:
    """Lowercased search tokens: jieba words for Chinese, words for Latin text; punctuation dropped.

    new_words=False turns off jieba's HMM guessing of words missing from its dictionary (an unknown
    name comes out in dictionary pieces or single characters) and cuts with rjieba (see the module
    docstring). CPU-bound: call it from a worker thread when on the event loop.
    """
    folded = fold(text)
    words = _jieba().lcut_for_search(folded, True) if new_words else _search_words(folded)  # type: ignore[attr-defined]
    return [w for w in (w.strip() for w in words) if w and not _PUNCT_OR_SPACE.fullmatch(w)]


def salient_terms(text: str, *, new_words: bool = True) -> list[str]:
    """Content words of text (stop words and single Latin letters removed), in order, deduplicated;
    new_words as for tokenize."""
    seen: dict[str, None] = {}
    for token in tokenize(text, new_words=new_words):
        if token in STOP_WORDS_ZH or token in STOP_WORDS_EN:
            continue
        if len(token) == 1 and not _CJK.match(token) and not token.isdigit():
            continue
        seen.setdefault(token, None)
    return list(seen)
