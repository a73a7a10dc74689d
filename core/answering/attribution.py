"""Each sentence of a finished answer tied to the evidence paragraph that supports it, markers corrected.

A sentence's support in a paragraph is the weighted share of its key terms (jieba words, Latin words,
numbers by value: core/answering/claims.normalise_numbers) that the paragraph holds, each term weighted by
how rare it is in the evidence (log(1 + N / (1 + paragraphs holding it))). A marker the model wrote is kept
when its paragraph supports the sentence, moved to the paragraph that does when one does, and removed
otherwise; a sentence without a marker gets one when a paragraph supports it. Lines that are no claims
(labels, part headings, the notices the pipeline appends) are left alone. Pure; CPU-bound (jieba): call it
from a worker thread (docs/design.md#attribution).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from core.answering.answer import CITATION
from core.answering.claims import normalise_numbers
from core.models import Hit
from core.record import Attribution
from core.text import STOP_WORDS_EN, STOP_WORDS_ZH, tokenize

SUPPORT = 0.5  # a paragraph supports a sentence holding this weighted share of its key terms
MIN_TERMS = 2  # a sentence with fewer key terms claims too little to attribute
# a marker, or the prompt's placeholder copied as is ("[编号]", "[n]"): both are the model's citation
_MARKERS = re.compile(r"(?:\s*\[(?:(?:编号|来源|出处|source\s*|ref\s*)?\d{1,3}|编号|n|N)\])+", re.IGNORECASE)
_SENTENCE = re.compile(r"[^。！？!?\n]+?(?:[。！？!?]+|\.(?=\s|$)|(?=\n)|$)", re.MULTILINE)
_ENDING = re.compile(r"[。！？!?.；;，,：:]*\s*$")
_NO_CLAIM = re.compile(r"^\s*(?:[（(【⚠]|注意[：:]|Note:|版本说明|Version note)")
# words about the answer itself ("根据…资料作答", "according to the sources"), no part of what it claims
_ANSWER_WORDS = frozenset(
    "根据 依据 资料 作答 回答 答案 文档 提到 显示 表示 指出 所述 可知 according source sources document "
    "documents mentioned states stated says said answer provided context".split()
)
_STOP = STOP_WORDS_ZH | STOP_WORDS_EN | _ANSWER_WORDS


def _terms(text: str) -> frozenset[str]:
    """Key terms of a text: words of two or more characters and numbers, stop words left out."""
    words = tokenize(normalise_numbers(_MARKERS.sub(" ", text)), new_words=False)
    return frozenset(w for w in words if w not in _STOP and (len(w) >= 2 or w.isdigit()))


def _support(sentence: frozenset[str], paragraph: frozenset[str], weights: dict[str, float]) -> float:
    total = sum(weights.get(term, 0.0) for term in sentence)
    if total <= 0:
        return 0.0
    return sum(weights.get(term, 0.0) for term in sentence if term in paragraph) / total


def attribute(answer: str, evidence: Sequence[Hit]) -> tuple[str, tuple[Attribution, ...]]:
    """The answer with its markers checked and completed, and per attributed sentence what was done."""
    if not evidence:
        return answer, ()
    paragraphs = [_terms(f"{hit.document_name}\n{hit.heading}\n{hit.content}") for hit in evidence]
    count = len(paragraphs)
    holding = Counter(term for paragraph in paragraphs for term in paragraph)  # paragraphs holding each term

    def weight(term: str) -> float:
        return math.log(1 + count / (1 + holding[term]))

    pieces: list[str] = []
    notes: list[Attribution] = []
    last = 0
    for match in _SENTENCE.finditer(answer):
        sentence = match.group(0)
        pieces.append(answer[last : match.start()])
        last = match.end()
        written = [int(n) for n in CITATION.findall(sentence)]
        placeholder = bool(_MARKERS.search(sentence)) and not written
        terms = _terms(sentence)
        if _NO_CLAIM.match(sentence) or len(terms) < MIN_TERMS:
            pieces.append(sentence)
            continue
        weights = {term: weight(term) for term in terms}
        scores = [_support(terms, paragraph, weights) for paragraph in paragraphs]
        best = max(range(count), key=lambda i: (scores[i], -i))
        supported = scores[best] >= SUPPORT
        kept = [n for n in dict.fromkeys(written) if 1 <= n <= count and scores[n - 1] >= SUPPORT]
        if kept:
            how, numbers = ("kept" if len(kept) == len(set(written)) else "corrected"), kept
        elif supported:
            how, numbers = ("corrected" if written or placeholder else "added"), [best + 1]
        else:
            how, numbers = ("removed" if written or placeholder else "none"), []
        text = sentence if how == "kept" else _remarked(sentence, numbers)
        pieces.append(text)
        source = numbers[0] if numbers else 0
        notes.append(
            Attribution(" ".join(_MARKERS.sub(" ", sentence).split()), source, how, round(scores[best], 3))
        )
    pieces.append(answer[last:])
    return "".join(pieces), tuple(notes)


def _remarked(sentence: str, numbers: Sequence[int]) -> str:
    """The sentence without its markers, the given ones put before its closing punctuation."""
    bare = _MARKERS.sub("", sentence)
    if not numbers:
        return bare
    marks = "".join(f"[{n}]" for n in numbers)
    ending = _ENDING.search(bare)
    cut = ending.start() if ending else len(bare)
    return (
        f"{bare[:cut]} {marks}{bare[cut:]}"
        if bare[:cut] and bare[:cut][-1].isascii()
        else f"{bare[:cut]}{marks}{bare[cut:]}"
    )
