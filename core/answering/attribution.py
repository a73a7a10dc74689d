"""Each sentence of a finished answer tied to the evidence paragraph(s) that support it, markers corrected.

A sentence's support in a paragraph is the weighted share of its key terms (jieba words, numbers by value:
core/answering/claims.normalise_numbers) that the paragraph holds, each term weighted by how rare it is in the
evidence (log(1 + N / (1 + paragraphs holding it))); a sentence joining two facts is supported by the two
paragraphs that hold them together; a sentence that rephrases its source, by a paragraph whose closest
sentence is near it in meaning (core.ports.SentenceMeaning, asked only about sentences the terms leave
untied); a sentence that none supports whole gets a marker after each clause a paragraph supports. A marker the
model wrote is kept when its paragraph supports the sentence, moved to the paragraph that does when one does,
and removed otherwise; a sentence without a marker gets one. Lines that are no claims (labels, part headings,
the notices the pipeline appends) are left alone. Pure; CPU-bound (jieba, the encoder): call it from a worker
thread (docs/design.md#attribution).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from core.answering.answer import CITATION
from core.answering.claims import normalise_numbers
from core.models import Hit
from core.ports import SentenceMeaning
from core.record import Attribution
from core.text import STOP_WORDS_EN, STOP_WORDS_ZH, tokenize

SUPPORT = 0.5  # a paragraph supports a sentence holding this weighted share of its key terms
# or, for a sentence that rephrases it, when one of its sentences is this close in meaning (the offline encoder)
# and it holds MEANING_TERMS of the sentence's weighted key terms (a paragraph about something else never does)
MEANING_SUPPORT = 0.6
MEANING_TERMS = 0.1
MEANING_CANDIDATES = 3  # paragraphs compared in meaning with a sentence: its best by terms, and its markers'
MEANING_SENTENCES = 30
REST_SHARE = 0.3  # what a sentence's first paragraph lacks must weigh this much for a second one to be cited
PAIR_SUPPORT = 0.75  # a sentence joining two facts: two paragraphs holding this share together support it
MIN_TERMS = 2  # a sentence with fewer key terms claims too little to attribute
# a marker, or the prompt's placeholder copied as is ("[编号]", "[n]"): both are the model's citation
_MARKERS = re.compile(r"(?:\s*\[(?:(?:编号|来源|出处|source\s*|ref\s*)?\d{1,3}|编号|n|N)\])+", re.IGNORECASE)
_SENTENCE = re.compile(r"[^。！？!?\n]+?(?:[。！？!?]+|\.(?=\s|$)|(?=\n)|$)", re.MULTILINE)
_CJK = re.compile(r"[\u4e00-\u9fff]")
# clauses of a sentence: cut after a Chinese comma or semicolon, or a Latin one followed by a space ("1,500" stays)
_CLAUSE = re.compile(r".+?(?:[，；;]|,(?=\s)|[。！？!?]+\s*$|\.\s*$|$)", re.DOTALL)
_CLAUSE_ENDS = " \t，；;,。！？!?."
_ENDING = re.compile(r"[。！？!?.；;，,：:]*\s*$")
_NO_CLAIM = re.compile(r"^\s*(?:[（(【⚠]|注意[：:]|Note:|版本说明|Version note)")
# words about the answer itself ("根据…资料作答", "according to the sources"), no part of what it claims
_ANSWER_WORDS = frozenset(
    "根据 依据 资料 作答 回答 答案 文档 提到 显示 表示 指出 所述 可知 according source sources document "
    "documents mentioned states stated says said answer provided context".split()
)
_STOP = STOP_WORDS_ZH | STOP_WORDS_EN | _ANSWER_WORDS
# a label the prompt asks for ("资料能支持的结论:", "无法从资料核实的部分:") heads a claim without being part of it
_LABEL = re.compile(r"^\s*([^:：\n]{1,16})[:：]")
_LABEL_WORDS = frozenset(
    "支持 结论 核实 无法 部分 引用 supported support verified verify cannot could".split()
)


def _terms(text: str) -> frozenset[str]:
    """Key terms of a text: words of two or more characters and numbers, stop words left out; a word jieba
    does not know comes out as single characters ("年假" as 年 / 假), which are joined back."""
    words = _joined_characters(tokenize(normalise_numbers(_MARKERS.sub(" ", text))))
    return frozenset(w for w in words if w not in _STOP and (len(w) >= 2 or w.isdigit()))


def _joined_characters(words: Sequence[str]) -> list[str]:
    """Runs of single Chinese characters that are no stop words joined into one word."""
    out: list[str] = []
    run = ""
    for word in [*words, ""]:
        if len(word) == 1 and _CJK.match(word) and word not in STOP_WORDS_ZH:
            run += word
            continue
        if len(run) >= 2:
            out.append(run)
        run = ""
        if word:
            out.append(word)
    return out


def _claim_text(sentence: str) -> str:
    """The sentence without a leading label of the answer's own structure ("资料能支持的结论:")."""
    label = _LABEL.match(sentence)
    if label and _terms(label.group(1)) <= _LABEL_WORDS:
        return sentence[label.end() :]
    return sentence


def _support(sentence: frozenset[str], paragraph: frozenset[str], weights: dict[str, float]) -> float:
    total = sum(weights.get(term, 0.0) for term in sentence)
    if total <= 0:
        return 0.0
    return sum(weights.get(term, 0.0) for term in sentence if term in paragraph) / total


@dataclass(frozen=True, slots=True)
class _Claim:
    """A sentence that makes a claim: where it is in the answer, its markers and its support per paragraph."""

    start: int
    end: int
    sentence: str
    written: tuple[int, ...]
    placeholder: bool
    scores: tuple[float, ...]  # each paragraph's weighted share of the sentence's key terms
    weights: dict[str, float]  # the sentence's key terms, each weighted by its rarity in the evidence


def attribute(
    answer: str, evidence: Sequence[Hit], meaning: SentenceMeaning | None = None
) -> tuple[str, tuple[Attribution, ...]]:
    """The answer with its markers checked and completed, and per attributed sentence what was done."""
    if not evidence:
        return answer, ()
    paragraphs = [_terms(f"{hit.document_name}\n{hit.heading}\n{hit.content}") for hit in evidence]
    claims = _claims(answer, paragraphs)
    close = _closeness(claims, evidence, meaning) if meaning is not None else {}
    pieces: list[str] = []
    notes: list[Attribution] = []
    last = 0
    for index, claim in enumerate(claims):
        pieces.append(answer[last : claim.start])
        last = claim.end
        count = len(claim.scores)

        def supports(paragraph: int, claim: _Claim = claim, index: int = index) -> bool:
            return claim.scores[paragraph] >= SUPPORT or close.get((index, paragraph), 0.0) >= MEANING_SUPPORT

        by_terms = max(range(count), key=lambda i: (claim.scores[i], -i))
        by_meaning = max(range(count), key=lambda i: (close.get((index, i), 0.0), claim.scores[i], -i))
        best = by_terms if claim.scores[by_terms] >= SUPPORT else by_meaning
        pair = [by_terms, *_complement(claim, paragraphs, by_terms)]
        together = len(pair) == 2 and _support_of(claim, paragraphs, pair) >= PAIR_SUPPORT
        written = claim.written
        kept = [
            n
            for n in dict.fromkeys(written)
            if 1 <= n <= count and (supports(n - 1) or (together and n - 1 in pair))
        ]
        if kept:
            extra = [i + 1 for i in pair if together and i + 1 not in kept]  # the other fact's paragraph
            how = "kept" if len(kept) == len(set(written)) and not extra else "corrected"
            numbers = sorted([*kept, *extra])
        elif supports(best) or together:
            how = "corrected" if written or claim.placeholder else "added"
            numbers = sorted(i + 1 for i in (pair if best == by_terms else [best]))
        else:
            clauses = _by_clauses(claim, paragraphs)
            if clauses:  # no paragraph supports the whole sentence, some support a clause of it
                pieces.append(_marked_clauses(claim.sentence, clauses))
                notes.extend(
                    Attribution(_plain(text), n, "added", round(share, 3)) for text, _, n, share in clauses
                )
                continue
            how, numbers = ("removed" if written or claim.placeholder else "none"), []
        pieces.append(claim.sentence if how == "kept" else _remarked(claim.sentence, numbers))
        source = numbers[0] if numbers else 0
        notes.append(
            Attribution(
                _plain(claim.sentence),
                source,
                how,
                round(_support_of(claim, paragraphs, [n - 1 for n in numbers] or [by_terms]), 3),
                round(close.get((index, source - 1), 0.0), 3) if source else 0.0,
            )
        )
    pieces.append(answer[last:])
    return "".join(pieces), tuple(notes)


def _claims(answer: str, paragraphs: Sequence[frozenset[str]]) -> list[_Claim]:
    """The answer's sentences that make a claim, each with its key terms' support in every paragraph."""
    count = len(paragraphs)
    holding = Counter(term for paragraph in paragraphs for term in paragraph)  # paragraphs holding each term
    claims: list[_Claim] = []
    for match in _SENTENCE.finditer(answer):
        sentence = match.group(0)
        terms = _terms(_claim_text(sentence))
        if _NO_CLAIM.match(sentence) or len(terms) < MIN_TERMS:
            continue
        weights = {term: math.log(1 + count / (1 + holding[term])) for term in terms}
        written = tuple(int(n) for n in CITATION.findall(sentence))
        claims.append(
            _Claim(
                match.start(),
                match.end(),
                sentence,
                written,
                bool(_MARKERS.search(sentence)) and not written,
                tuple(_support(terms, paragraph, weights) for paragraph in paragraphs),
                weights,
            )
        )
    return claims


def _by_clauses(claim: _Claim, paragraphs: Sequence[frozenset[str]]) -> list[tuple[str, int, int, float]]:
    """The clauses of a sentence that a paragraph supports on its own ("The stipend is 1,500 CNY, and the gym
    allowance is 500 CNY": the first one): (clause text, where it ends in the sentence, paragraph number,
    support), in sentence order."""
    bare = _MARKERS.sub("", claim.sentence)
    pieces = [m for m in _CLAUSE.finditer(bare) if m.group(0).strip()]
    if len(pieces) < 2:
        return []
    found = []
    for piece in pieces:
        terms = _terms(_claim_text(piece.group(0)))
        if len(terms) < MIN_TERMS:
            continue
        weights = {term: claim.weights.get(term, 0.0) for term in terms}
        scores = [_support(terms, paragraph, weights) for paragraph in paragraphs]
        best = max(range(len(scores)), key=lambda i: (scores[i], -i))
        if scores[best] >= SUPPORT:
            end = piece.end() - len(piece.group(0)) + len(piece.group(0).rstrip(_CLAUSE_ENDS))
            found.append((piece.group(0), end, best + 1, scores[best]))
    return found


def _marked_clauses(sentence: str, clauses: Sequence[tuple[str, int, int, float]]) -> str:
    """The sentence without its markers, each supported clause's marker put where that clause ends."""
    bare = _MARKERS.sub("", sentence)
    out: list[str] = []
    last = 0
    for _, end, number, _ in clauses:
        out.extend((bare[last:end], _marks(bare[:end], [number])))
        last = end
    out.append(bare[last:])
    return "".join(out)


def _support_of(claim: _Claim, paragraphs: Sequence[frozenset[str]], chosen: Sequence[int]) -> float:
    """The weighted share of the sentence's key terms that the chosen paragraphs hold together."""
    total = sum(claim.weights.values())
    held = sum(w for t, w in claim.weights.items() if any(t in paragraphs[i] for i in chosen))
    return held / total if total > 0 else 0.0


def _complement(claim: _Claim, paragraphs: Sequence[frozenset[str]], first: int) -> list[int]:
    """The index of a second paragraph holding what the first lacks of a sentence that joins two facts
    ("年假和病假分别有几天"): at least ``SUPPORT`` of the rest's weight in ``MIN_TERMS`` terms or more, the rest
    weighing at least ``REST_SHARE`` (one generic word the first lacks is no second fact)."""
    total = sum(claim.weights.values())
    rest = {term: weight for term, weight in claim.weights.items() if term not in paragraphs[first]}
    left = sum(rest.values())
    if total <= 0 or left < REST_SHARE * total:
        return []
    held = [
        (sum(w for t, w in rest.items() if t in paragraph) / left, -i)
        for i, paragraph in enumerate(paragraphs)
        if i != first and sum(t in paragraph for t in rest) >= MIN_TERMS
    ]
    if not held:
        return []
    share, negative = max(held)
    return [-negative] if share >= SUPPORT else []


def _closeness(
    claims: Sequence[_Claim], evidence: Sequence[Hit], meaning: SentenceMeaning
) -> dict[tuple[int, int], float]:
    """For each claim its terms do not tie to a paragraph, its similarity in meaning to the closest sentence of
    each candidate paragraph (the written markers' and its best few by terms that hold ``MEANING_TERMS``)."""
    pairs: list[tuple[int, int]] = []
    for index, claim in enumerate(claims):
        if max(claim.scores) >= SUPPORT:  # its terms tie it already
            continue
        count = len(claim.scores)
        written = {n - 1 for n in claim.written if 1 <= n <= count}
        ranked = sorted(range(count), key=lambda i: (-claim.scores[i], i))[:MEANING_CANDIDATES]
        candidates = dict.fromkeys([*sorted(written), *ranked])
        pairs.extend((index, i) for i in candidates if claim.scores[i] >= MEANING_TERMS)
    if not pairs:
        return {}
    asked = list(dict.fromkeys(index for index, _ in pairs))
    paragraphs = list(dict.fromkeys(i for _, i in pairs))
    sentences = {i: _paragraph_sentences(evidence[i].content) for i in paragraphs}
    flat = [(i, text) for i in paragraphs for text in sentences[i]]
    if not flat:
        return {}
    texts = [_plain(_claim_text(claims[index].sentence)) for index in asked]
    rows = meaning.similarities(texts, [text for _, text in flat])
    best: dict[tuple[int, int], float] = {}
    for index, row in zip(asked, rows, strict=True):
        for (paragraph, _), score in zip(flat, row, strict=True):
            key = (index, paragraph)
            best[key] = max(best.get(key, -1.0), float(score))
    return {pair: best.get(pair, 0.0) for pair in pairs}


def _paragraph_sentences(content: str) -> list[str]:
    """A paragraph's sentences as compared in meaning (at most ``MEANING_SENTENCES``, each of 4+ characters)."""
    found = (" ".join(m.group(0).split()) for m in _SENTENCE.finditer(content))
    return [text for text in found if len(text) >= 4][:MEANING_SENTENCES]


def _remarked(sentence: str, numbers: Sequence[int]) -> str:
    """The sentence without its markers, the given ones put before its closing punctuation."""
    bare = _MARKERS.sub("", sentence)
    if not numbers:
        return bare
    ending = _ENDING.search(bare)
    cut = ending.start() if ending else len(bare)
    return f"{bare[:cut]}{_marks(bare[:cut], numbers)}{bare[cut:]}"


def _marks(before: str, numbers: Sequence[int]) -> str:
    """The markers to put after this text: "[1][2]", after a space when the text ends in a Latin character."""
    marks = "".join(f"[{n}]" for n in numbers)
    return f" {marks}" if before and before[-1].isascii() else marks


def _plain(sentence: str) -> str:
    """The sentence without its markers, its whitespace collapsed: how it is stored and compared in meaning."""
    return " ".join(_MARKERS.sub(" ", sentence).split())
