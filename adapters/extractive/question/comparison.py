"""Compared entities in English questions ("Which is older, X or Y?", "Were X and Y both ...?").

A comparison names two or more proper-noun spans (or quoted titles) joined only by ``,``, ``and`` or
``or``; with ``or`` between them, a comparison word (both, same, share, common, either, difference ...,
or a comparative: more, older, longer ...) or an auxiliary right before them (``Are X and Y ...``), the
question becomes one part per entity: the rest of the question with that entity alone in the list's
place. ``compared_entities`` recognises such parts afterwards (in any language): they differ only in the
entity slot, so each asks about one named thing and needs its own supporting paragraph. CPU-bound
(jieba): call from a worker thread.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from adapters.extractive.language.entities import english_spans, quoted
from adapters.extractive.language.terms import pos_tokens

_GAP = re.compile(r"^\s*,?\s*(?:(and|or|&)\s+)?(?:the\s+)?$", re.IGNORECASE)
_CUE = re.compile(
    r"\b(?:both|same|share|shared|common|either|neither|compare|compared|comparison|difference|differ|"
    r"between|respectively|each|versus|vs|more|less|fewer|older|younger|earlier|larger|smaller|bigger|longer|"
    r"shorter|taller|higher|greater)\b",
    re.IGNORECASE,
)
_AUXILIARY = re.compile(r"\b(?:are|were|is|was|do|does|did|have|has|had)\s+(?:the\s+\w+\s+)?$", re.IGNORECASE)


def _located(segment: str) -> list[tuple[int, int, str]]:
    """(start, end, name) of each proper-noun span or quoted title, in order of appearance."""
    found: list[tuple[int, int, str]] = []
    for name in [*quoted(segment), *english_spans(segment, question=True)]:
        index = segment.find(name)
        if index < 0:
            continue
        span = (index, index + len(name), name)
        if not any(s < span[1] and span[0] < e for s, e, _ in found):
            found.append(span)
    return sorted(found)


def _listed(spans: list[tuple[int, int, str]], index: int, segment: str) -> bool:
    """A bare comma joins list items only when an Oxford comma closes the list later (A, B, and C)."""
    for later in range(index + 1, len(spans)):
        gap = segment[spans[later - 1][1] : spans[later][0]]
        if re.fullmatch(r"\s*,\s*(?:and|or)\s+(?:the\s+)?", gap, re.IGNORECASE):
            return True
        if gap.strip() != ",":
            return False
    return False


def _runs(spans: list[tuple[int, int, str]], segment: str) -> list[tuple[list[tuple[int, int, str]], bool]]:
    """Maximal lists of spans joined only by list separators, with whether an "or" joins them."""
    runs: list[tuple[list[tuple[int, int, str]], bool]] = []
    current: list[tuple[int, int, str]] = []
    has_or = joined = False
    for index, span in enumerate(spans):
        if current:
            gap = _GAP.match(segment[current[-1][1] : span[0]])
            if gap and (gap.group(1) or _listed(spans, index, segment)):
                current.append(span)
                joined = joined or bool(gap.group(1))
                has_or = has_or or (gap.group(1) or "").lower() == "or"
                continue
            if len(current) > 1 and joined:
                runs.append((current, has_or))
        current, has_or, joined = [span], False, False
    if len(current) > 1 and joined:
        runs.append((current, has_or))
    return runs


def split_compared_en(segment: str) -> list[str] | None:
    """One part per compared entity, or None when the segment compares nothing."""
    runs = _runs(_located(segment), segment)
    if not runs:
        return None
    run, has_or = next(((r, o) for r, o in runs if o), runs[0])
    start, end = run[0][0], run[-1][1]
    if not (has_or or _CUE.search(segment) or _AUXILIARY.search(segment[:start])):
        return None
    head, tail = segment[:start], segment[end:]
    return [f"{head}{name}{tail}" for _, _, name in run]


def compared_entities(parts: Sequence[str]) -> list[str]:
    """For parts that distribute one question over entities (they share most of their words), each
    part's entity (the words where they differ); otherwise "" for every part. Uses jieba: CPU-bound."""
    none = [""] * len(parts)
    if len(parts) < 2:
        return none
    tokens = [[t.word for t in pos_tokens(part)] for part in parts]
    prefix = _common_length(tokens)
    suffix = _common_length([list(reversed(t)) for t in tokens])
    shared = [sum(len(w) for w in t[:prefix]) + sum(len(w) for w in t[len(t) - suffix :]) for t in tokens]
    if any(prefix + suffix >= len(t) for t in tokens) or min(shared) < 0.4 * min(len(p) for p in parts):
        return none
    foci = ["".join(t[prefix : len(t) - suffix]).strip(" ,，、") for t in tokens]
    return foci if all(foci) else none


def _common_length(lists: Sequence[Sequence[str]]) -> int:
    length = 0
    while all(len(x) > length and x[length] == lists[0][length] for x in lists):
        length += 1
    return length
