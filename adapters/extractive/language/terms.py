"""Terms for the extractive engine: jieba POS tokens, salient terms, noun phrases and evidence matching.

All functions here are CPU-bound (jieba); the engine calls them from worker threads.

Segmentation uses jieba's dictionary without its HMM guesser (``HMM=False``): unknown words then come
out as single characters, and runs of single content characters are merged back into one word, which
recovers words missing from jieba's dictionary (``年``+``假`` -> ``年假``) more reliably than the HMM does
(it cuts ``年假能`` into ``年`` / ``假能``). The global jieba dictionary is never modified, so the
search index's tokenisation (core.text) is unaffected.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from core.text import STOP_WORDS_EN, STOP_WORDS_ZH, fold_accents, negated_word
from core.text import fold as fold  # the form every comparison here uses (re-exported)

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_SPACE = re.compile(r"\s+")
_SENTENCE = re.compile(r"[^。！？!?\n]+?(?:[。！？!?]+[”’」』)]*|\.(?=\s)|\n|$)")

QUESTION_WORDS_ZH = frozenset(
    (
        "哪些 什么 多少 几 几天 几年 几个 几次 几种 几位 几月 多久 多长 多长时间 多大 多高 如何 怎么 怎样 "
        "怎么样 怎么办 为什么 为何 是否 吗 呢 哪 哪里 哪儿 哪个 哪一个 哪种 哪位 谁 何时 何 有没有 是不是 "
        "请问 说明 介绍 一下 各自 分别 各 还是 或者 或 以及 并且 另外 此外 同时 还有 那么 所以 因为 如果 "
        "则 时候 情况 问题 规定 多少钱 一次 每次 每年 每天"
    ).split()
)
COMPARISON_WORDS = frozenset(
    (
        "区别 差异 差别 不同 相比 比较 对比 相同 一样 更 更高 更低 更多 更少 更长 更短 更大 更小 最 最大 "
        "最小 最多 最少 最长 最短 difference differences differ compare compared comparison versus vs "
        "better worse larger smaller bigger longer shorter more less higher lower which older younger earlier "
        "later first last newer oldest youngest earliest latest taller tallest same"
    ).split()
)
STOP_WORDS_EXTRA_EN = frozenset(
    (
        "get got have has had need needs know explain describe often any some there what's per "
        "allowed also just only still should does one ones i'm am during between among within without "
        "against through after before since until under over via onto upon near named called"
    ).split()
)
GENERIC_VERBS_ZH = frozenset(
    "有 是 能 会 要 可 需 需要 可以 应该 应当 包括 包含 属于 进行 算 内 外 里 间 找".split()
)

ALIASES: dict[str, tuple[str, ...]] = {
    "jvm": ("java虚拟机",),
    "java虚拟机": ("jvm",),
    "gc": ("垃圾回收",),
    "垃圾回收": ("gc",),
}

_DROP_FLAGS = ("r", "p", "c", "u", "y", "e", "o", "x", "d", "w", "q", "f", "z", "h", "k")
_NOUN_FLAGS = ("n", "eng", "b", "j", "l", "i", "nz", "vn", "s", "t")
_MERGEABLE = ("n", "m", "a", "b", "j", "t", "g", "v", "l", "i", "s")


@dataclass(frozen=True, slots=True)
class Token:
    """One segmented word and its jieba part-of-speech flag."""

    word: str
    flag: str

    @property
    def is_cjk(self) -> bool:
        """True when the word contains a CJK character."""
        return bool(CJK.search(self.word))

    @property
    def is_number(self) -> bool:
        """True for an Arabic numeral such as 30, 2026 or 1,500."""
        return bool(NUMBER.fullmatch(self.word))


def sentences(text: str) -> list[str]:
    """Sentences of text: Chinese 。！？, English . ! ? before a space, and line ends close a sentence."""
    return [m.group(0).strip() for m in _SENTENCE.finditer(text) if m.group(0).strip()]


def squeeze(text: str) -> str:
    """fold() without whitespace, for substring tests on CJK text."""
    return _SPACE.sub("", fold(text))


@functools.cache
def _posseg() -> object:
    import logging

    import jieba
    import jieba.posseg

    jieba.setLogLevel(logging.WARNING)
    return jieba.posseg


def dictionary_tag(word: str) -> str | None:
    """The part of speech jieba's dictionary gives the word (None for a word it does not list)."""
    posseg = _posseg()
    table: dict[str, str] = posseg.dt.word_tag_tab  # type: ignore[attr-defined]
    return table.get(word)


def _occurs(term: str, squeezed: str) -> bool:
    """Whether the squeezed CJK term occurs in the squeezed text other than as the tail of a negated word
    (成年人 in 未成年人, 营利 in 非营利: core.text.negated_word)."""
    start = squeezed.find(term)
    while start >= 0:
        if start == 0 or not negated_word(squeezed[start - 1] + term):
            return True
        start = squeezed.find(term, start + 1)
    return False


_HOW_PHRASE = re.compile(r"\bhow\s+(?:long|many|much|often|far|old|big|large)\b", re.IGNORECASE)


def pos_tokens(text: str, *, hmm: bool = False) -> list[Token]:
    """jieba POS tokens of text (NFKC), with runs of unknown single characters merged into one word.

    English question phrases ("how long", "how many") become a single stop token. With hmm=True jieba
    guesses unknown words itself (better for person and place names, worse for terms).
    """
    posseg = _posseg()
    raw: list[Token] = []
    text = fold_accents(unicodedata.normalize("NFKC", text))
    cursor = 0
    for match in [*_HOW_PHRASE.finditer(text), None]:
        end = match.start() if match else len(text)
        chunk = text[cursor:end]
        if chunk:
            raw.extend(Token(p.word, p.flag) for p in posseg.lcut(chunk, HMM=hmm))  # type: ignore[attr-defined]
        if match:
            raw.append(Token(match.group(0), "r"))
            cursor = match.end()
    merged: list[Token] = []
    run: list[Token] = []

    def flush() -> None:
        if len(run) > 1:
            merged.append(Token("".join(t.word for t in run), "n"))
        else:
            merged.extend(run)
        run.clear()

    for token in raw:
        mergeable = (
            len(token.word) == 1
            and token.is_cjk
            and token.flag.startswith(_MERGEABLE)
            and token.word not in STOP_WORDS_ZH
            and token.word not in QUESTION_WORDS_ZH
            and token.word not in GENERIC_VERBS_ZH
        )
        if mergeable:
            run.append(token)
        else:
            flush()
            merged.append(token)
    flush()
    return _glue_suffixes(merged)


def _glue_suffixes(tokens: list[Token]) -> list[Token]:
    """Attach a one-character noun to the content word before it (回收 + 器 -> 回收器)."""
    out: list[Token] = []
    for token in tokens:
        glue = (
            out
            and len(token.word) == 1
            and token.is_cjk
            and token.flag in ("n", "ng", "nz")
            and token.word not in STOP_WORDS_ZH
            and len(out[-1].word) > 1
            and out[-1].is_cjk
            and is_content(out[-1])
        )
        if glue:
            out[-1] = Token(out[-1].word + token.word, "n")
        else:
            out.append(token)
    return out


def is_stop(word: str) -> bool:
    """Stop words, question words, comparison markers and generic verbs (any language)."""
    low = word.lower()
    return (
        low in STOP_WORDS_ZH
        or low in STOP_WORDS_EN
        or low in STOP_WORDS_EXTRA_EN
        or low in QUESTION_WORDS_ZH
        or low in COMPARISON_WORDS
        or low in GENERIC_VERBS_ZH
    )


def is_content(token: Token) -> bool:
    """A word that carries meaning of its own: a number, or a non-stop noun, verb, adjective or name."""
    if token.is_number:
        return True
    word = token.word.strip()
    if not word or is_stop(word):
        return False
    if token.is_cjk:
        if len(word) == 1:
            return token.flag in ("n", "ng", "nr", "ns", "nt", "nz")
        return not token.flag.startswith(_DROP_FLAGS) and not (token.flag == "m" and not token.is_number)
    return bool(re.fullmatch(r"[a-z][a-z0-9+#._'-]*", word.lower())) and len(word) >= 2


def is_nounish(token: Token) -> bool:
    """A content word that can head a noun phrase."""
    return is_content(token) and (token.is_number or token.flag.startswith(_NOUN_FLAGS))


def terms(text: str) -> list[str]:
    """Salient terms of text, folded and deduplicated in order (numbers and years included)."""
    seen: dict[str, None] = {}
    for token in pos_tokens(text):
        if is_content(token):
            seen.setdefault(fold(token.word).strip(), None)
    return list(seen)


def join_words(words: Iterable[str]) -> str:
    """Concatenate words: no space between CJK neighbours, one space wherever Latin text meets."""
    out = ""
    for word in words:
        word = word.strip()
        if not word:
            continue
        if out and not (CJK.match(out[-1]) and CJK.match(word[0])):
            out += " "
        out += word
    return out


def noun_phrases(text: str, *, tokens: Sequence[Token] | None = None) -> list[str]:
    """Noun phrases in order: runs of content words joined by 的, ending on a noun-like word (tokens: the
    text's pos_tokens when the caller has them already)."""
    phrases: list[str] = []
    run: list[Token] = []

    def flush() -> None:
        while run and not is_nounish(run[-1]):
            run.pop()
        while run and run[0].word == "的":
            run.pop(0)
        if run:
            phrase = join_words(t.word for t in run)
            if phrase not in phrases:
                phrases.append(phrase)
        run.clear()

    for token in pos_tokens(text) if tokens is None else tokens:
        if not token.word.strip():
            continue
        if is_content(token) or (token.word == "的" and run):
            run.append(token)
        else:
            flush()
    flush()
    return phrases


def stem(word: str) -> str:
    """A light English stem for prefix matching (types -> type, policies -> policy, worked -> work)."""
    if len(word) >= 5 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) >= 5 and word.endswith(("ses", "xes", "ches", "shes")):
        return word[:-2]
    if len(word) >= 4 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    if len(word) >= 7 and word.endswith("ing"):
        return word[:-3]
    if len(word) >= 6 and word.endswith("ed") and not word.endswith("eed"):
        return word[:-2]
    return word


@functools.cache
def _latin_pattern(term: str) -> re.Pattern[str]:
    if NUMBER.fullmatch(term):
        return re.compile(rf"(?<![\d.,]){re.escape(term)}(?![\d])")
    return re.compile(rf"(?<![a-z0-9]){re.escape(stem(term))}")


@dataclass(frozen=True, slots=True)
class Haystack:
    """Text prepared for term lookups (folded for Latin words, squeezed for CJK)."""

    folded: str
    squeezed: str

    @classmethod
    def of(cls, text: str) -> Haystack:
        """Prepare text for lookups."""
        return cls(fold(text), squeeze(text))

    def contains(self, term: str) -> bool:
        """Whether the term, or one of its aliases, occurs (word-start match for Latin words)."""
        for candidate in (term, *ALIASES.get(term, ())):
            if CJK.search(candidate):
                if _occurs(squeeze(candidate), self.squeezed):
                    return True
            elif _latin_pattern(candidate).search(self.folded):
                return True
        return False

    def matched(self, wanted: Iterable[str]) -> list[str]:
        """The wanted terms that occur here, in order."""
        return [term for term in wanted if self.contains(term)]
