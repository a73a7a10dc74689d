"""The evidence quoted under a model's answer for the question parts it left out, as the reader sees it.

Which parts were left out, and which sentences answer them, is the extractive judge's decision
(core.ports.LeftOutParts); this module only words it (docs/design.md#parts-the-answer-left-out).
"""

from __future__ import annotations

from collections.abc import Sequence

from core.messages import text
from core.record import SuppliedQuote
from core.text import shortened

QUOTED_PART_CHARS = 60  # a part named in the heading line is shortened to this many characters


def left_out_text(quotes: Sequence[SuppliedQuote], lang: str) -> str:
    """One heading line per left-out part ("回答没有涉及「…」，资料中的相关内容："), then its quoted sentences
    with their markers; "" when nothing was left out."""
    lines: list[str] = []
    parts = list(dict.fromkeys(quote.part for quote in quotes))
    for part in parts:
        lines.append(text("answer.left_out", lang, part=shortened(part, QUOTED_PART_CHARS)))
        lines.extend(f"- {quote.sentence} [{quote.source}]" for quote in quotes if quote.part == part)
    return "\n".join(lines)
