"""The extractive answer: per question part, the best evidence sentences quoted with numbered citations.

``[n]`` is the 1-based index of the paragraph in the request's evidence, as the pipeline numbers its
sources. A part the evidence does not cover says so plainly; nothing is ever composed beyond the
quoted sentences, a label and the part headings. CPU-bound (jieba): call from a worker thread.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from adapters.extractive.assess import DEFAULT_COVERAGE_THRESHOLD, hit_text, part_coverage
from adapters.extractive.parts import question_parts
from adapters.extractive.terms import Haystack, join_words, sentences, squeeze, terms
from core.models import AnswerRequest, Hit

LABELS = {
    "zh": "（摘录式回答：未使用大模型，以下内容直接摘自资料）",
    "en": "(Extractive answer: no language model was used; sentences are quoted from the sources.)",
}
MAX_SENTENCES = 5
RELATIVE_FLOOR = 0.75  # a sentence's term relevance must reach this share of the best one's
_QUANTITY = re.compile(
    r"几|多少|多久|多长|多大|多高|哪年|何时|什么时候|how (?:many|much|long|often|old|far)|when", re.I
)
_DIGIT = re.compile(r"\d")
_LIST_MARK = re.compile(r"^\s*(?:[-*+•]\s+|\d+[.)、]\s+|>\s*)")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}")


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence of the evidence and where it comes from."""

    text: str
    source: int  # 1-based index of the hit in the evidence
    position: int

    @property
    def introduces_list(self) -> bool:
        """A sentence ending with a colon announces the lines that follow it."""
        return self.text.rstrip().endswith((":", "："))


QUOTED_PART_CHARS = 80  # a not-found line quotes at most this much of a (very long) question part


def not_found_line(part: str, lang: str) -> str:
    """The plain statement that the sources say nothing about a part (a long part quoted shortened)."""
    part = " ".join(part.split())
    if len(part) > QUOTED_PART_CHARS:
        part = part[: QUOTED_PART_CHARS - 1].rstrip() + "…"
    if lang == "zh":
        return f"资料中未找到关于「{part}」的信息。"
    return f'The sources contain no information about "{part}".'


def _lines(content: str) -> list[str]:
    """Content as prose lines: wrapped lines of a paragraph joined, headings dropped, list marks removed,
    table rows spelled out with their headers."""
    out: list[str] = []
    header: list[str] = []
    wrapped = False  # whether the previous line was prose that the next line may continue
    for raw in content.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or _TABLE_RULE.match(line):
            wrapped = False
            continue
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if not header:
                header = cells
                continue
            pairs = zip(header, cells, strict=False)
            out.append("；".join(f"{h}：{c}" if h else c for h, c in pairs) + "。")
            continue
        header = []
        is_item = bool(_LIST_MARK.match(line))
        if wrapped and not is_item and not out[-1].endswith(("。", "！", "？", "：", ":")):
            out[-1] = join_words((out[-1], line))
        else:
            out.append(_LIST_MARK.sub("", line))
        wrapped = True
    return out


def split_sentences(evidence: Sequence[Hit]) -> list[Sentence]:
    """Every sentence of the evidence, in evidence order."""
    found: list[Sentence] = []
    for index, hit in enumerate(evidence, start=1):
        position = 0
        for line in _lines(hit.content):
            for text in sentences(line):
                if len(squeeze(text)) >= 2:
                    found.append(Sentence(text, index, position))
                    position += 1
    return found


def best_sentences(part: str, evidence: Sequence[Hit], candidates: Sequence[Sentence]) -> list[Sentence]:
    """The sentences that answer a part best, in evidence order (ties broken by evidence order)."""
    wanted = terms(part)
    if not wanted:
        return []
    asks_quantity = bool(_QUANTITY.search(part))
    context = [Haystack.of(f"{hit.document_name}\n{hit.heading}") for hit in evidence]
    scored: list[tuple[float, float, Sentence]] = []  # (rank score, relevance, sentence)
    for sentence in candidates:
        own = set(Haystack.of(sentence.text).matched(wanted))
        if not own:
            continue
        around = set(context[sentence.source - 1].matched(wanted)) - own
        relevance = len(own) + 0.5 * len(around)
        boost = 1.0 if asks_quantity and _DIGIT.search(sentence.text) else 0.0
        scored.append((relevance + boost, relevance, sentence))
    scored.sort(key=lambda item: (-item[0], item[2].source, item[2].position))
    best = max(relevance for _, relevance, _ in scored) if scored else 0.0
    chosen: list[Sentence] = []
    for _, relevance, sentence in scored:
        if len(chosen) >= MAX_SENTENCES:
            break
        if relevance < best * RELATIVE_FLOOR or sentence in chosen:
            continue
        if sentence.introduces_list:
            if relevance < best:
                continue  # a lead-in ("…如下：") only makes sense with the list it announces
            chosen.append(sentence)
            chosen.extend(_following(sentence, candidates, room=MAX_SENTENCES - len(chosen), chosen=chosen))
        else:
            chosen.append(sentence)
    return sorted(chosen, key=lambda s: (s.source, s.position))


def _following(
    sentence: Sentence, candidates: Sequence[Sentence], *, room: int, chosen: list[Sentence]
) -> list[Sentence]:
    after = [
        s
        for s in candidates
        if s.source == sentence.source and s.position > sentence.position and s not in chosen
    ]
    return after[: max(0, room)]


def answer_pieces(request: AnswerRequest, *, threshold: float = DEFAULT_COVERAGE_THRESHOLD) -> list[str]:
    """The answer as stream pieces: the label, then each part's heading and quoted sentences."""
    lang = "zh" if request.lang == "zh" else "en"
    evidence = request.evidence
    parts = question_parts(request.question)
    haystack = Haystack.of("\n".join(hit_text(h) for h in evidence))
    candidates = split_sentences(evidence)
    pieces = [LABELS[lang] + "\n"]
    for part in parts:
        if len(parts) > 1:
            pieces.append(f"\n【{part}】\n" if lang == "zh" else f'\nOn "{part}":\n')
        coverage = part_coverage(part, haystack)
        chosen = (
            best_sentences(part, evidence, candidates) if evidence and coverage.share >= threshold else []
        )
        if not chosen:
            pieces.append(("\n" if len(parts) == 1 else "") + not_found_line(part, lang) + "\n")
            continue
        if len(parts) == 1:
            pieces.append("\n")
        pieces.extend(f"- {sentence.text} [{sentence.source}]\n" for sentence in chosen)
    return pieces
