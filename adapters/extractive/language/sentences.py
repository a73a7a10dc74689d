"""Evidence as sentences: prose lines of each paragraph (lists, wrapped lines and table rows handled), split
into sentences that remember which paragraph they come from (pure; the answer quotes them, the semantic
check compares them with the question)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from adapters.extractive.language.terms import join_words, sentences, squeeze
from core.models import Hit

_LIST_MARK = re.compile(r"^\s*(?:[-*+•]\s+|\d+[.)、]\s+|>\s*)")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}")
_ITEM_MARK = re.compile(
    r"^\s*(?:[（(][一二三四五六七八九十百\d]+[）)]|\d+[.、．)）]|[一二三四五六七八九十]+、)"
)


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

    @property
    def is_list_item(self) -> bool:
        """A sentence opening with an item mark kept in the text ("（二）…", "3、…", "一、…"; Markdown list marks
        are removed from the lines)."""
        return bool(_ITEM_MARK.match(self.text))


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
