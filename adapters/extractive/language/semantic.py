"""Meaning, not only words: how close each evidence sentence is to each question part (offline embedder).

A question in everyday words ("被单位辞退了，多久之内可以去申请劳动仲裁？") shares few terms with the statute
that answers it ("劳动争议申请仲裁的时效期间为一年"), so term coverage alone calls it unsupported. The engine
embeds the parts and the evidence sentences with the offline multilingual sentence encoder (cosine of unit
vectors) and a part the terms do not cover counts as supported by a sentence when

* the sentence is at least ``SEMANTIC_SUPPORT`` similar to the part,
* the sentence's paragraph contains every entity term of the part (a named thing, a number, a quoted
  title: a paragraph about another subject is no support however similar it reads), and
* the sentence states a quantity of the kind the part asks for (quantities.py), and then also contains
  the part's most specific word in the evidence (judging.assess.focus_term): a stated amount about
  something else ("减除费用六万元" for "子女教育每月可以扣多少钱") answers nothing.

Bridge-shaped and compared parts are never covered this way: they need their own paragraphs and hops.
The threshold was set on the dev sets (HotpotQA dev-500, the team's Chinese law set) and checked on the
validation set; see the README's evaluation section.
"""

from __future__ import annotations

from dataclasses import dataclass

from adapters.extractive.language.sentences import Sentence

SEMANTIC_SUPPORT = 0.45
SEMANTIC_MARGIN = 0.06  # other sentences within this of the best one support the part too


@dataclass(frozen=True, slots=True)
class Similarities:
    """Cosine similarity of every question part to every evidence sentence."""

    parts: tuple[str, ...]
    sentences: tuple[Sentence, ...]
    scores: tuple[tuple[float, ...], ...]  # scores[part index][sentence index]

    def ranked(self, part: str) -> list[tuple[float, Sentence]]:
        """The evidence sentences for a part, most similar first (empty for an unknown part)."""
        if part not in self.parts:
            return []
        row = self.scores[self.parts.index(part)]
        return sorted(zip(row, self.sentences, strict=True), key=lambda item: (-item[0], item[1].source))
