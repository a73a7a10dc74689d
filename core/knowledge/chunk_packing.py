"""Splitting over-long text at sentence, clause and line ends, and packing the pieces within a token limit."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from core.budget import count_tokens as _count_uncached
from core.budget import prefix_length_within

# Packing counts the same strings several times (a paragraph alone, then as its unit; a chunk's last
# candidate, then the finished chunk): remembering recent counts halves the tiktoken work, same result.
count_tokens = functools.lru_cache(maxsize=1024)(_count_uncached)

_SENTENCE_END = re.compile(r"[。！？；…]+[”’」』）)\]\"']*[ \t]*|[.!?]+[\"')\]”’]*\s+|\n+")
_CLAUSE_END = re.compile(r"[，、,：:;][ \t]*")
_LINE_END = re.compile(r"\n+")


def _pieces(text: str, boundary: re.Pattern[str]) -> list[str]:
    """text cut after every boundary match; the pieces concatenate back to text."""
    pieces: list[str] = []
    start = 0
    for match in boundary.finditer(text):
        if match.end() > start:
            pieces.append(text[start : match.end()])
            start = match.end()
    if start < len(text):
        pieces.append(text[start:])
    return pieces


def _windows(text: str, max_tokens: int) -> list[str]:
    """text cut into the longest prefixes within max_tokens, never inside a character."""
    windows: list[str] = []
    while text:
        end = prefix_length_within(text, max_tokens, count=count_tokens, minimum=1)
        if end < len(text):
            space = text.rfind(" ", 0, end)
            if space > end * 0.8:
                end = space + 1
        windows.append(text[:end])
        text = text[end:]
    return windows


Splitter = Callable[[str, int], list[str]]


def _by(boundary: re.Pattern[str], finer: Splitter) -> Splitter:
    """A splitter cutting at boundary, packing the pieces within the limit, using finer on big pieces."""

    def split(text: str, max_tokens: int) -> list[str]:
        parts: list[str] = []
        for piece in _pieces(text, boundary):
            parts.extend(finer(piece, max_tokens) if count_tokens(piece) > max_tokens else [piece])
        return pack_balanced(parts, max_tokens, joiner="")

    return split


_split_clauses = _by(_CLAUSE_END, _windows)
split_sentences = _by(_SENTENCE_END, _split_clauses)
split_lines = _by(_LINE_END, _windows)


def pack(parts: list[str], max_tokens: int, *, joiner: str) -> list[str]:
    """Greedily join consecutive parts while the joined text stays within max_tokens."""
    packed: list[str] = []
    current = ""
    for part in parts:
        candidate = current + joiner + part if current else part
        if current and count_tokens(candidate) > max_tokens:
            packed.append(current)
            current = part
        else:
            current = candidate
    if current:
        packed.append(current)
    return packed


def pack_balanced(parts: list[str], max_tokens: int, *, joiner: str) -> list[str]:
    """Like pack, in as few chunks, but of even size: no small tail fragment after a full chunk.

    Tries per-chunk limits from the even share (total / chunks) up to max_tokens and keeps the first
    that needs no more chunks than greedy packing does.
    """
    greedy = pack(parts, max_tokens, joiner=joiner)
    if len(greedy) < 2:
        return greedy
    share = -(-sum(count_tokens(text) for text in greedy) // len(greedy))
    step = max(1, (max_tokens - share) // 8)
    for limit in range(share, max_tokens, step):
        balanced = pack(parts, limit, joiner=joiner)
        if len(balanced) <= len(greedy) and all(fits(text, max_tokens) for text in balanced):
            return balanced
    return greedy


def fits(text: str, max_tokens: int) -> bool:
    """Whether text is within max_tokens (a token is at least one UTF-8 byte, so short text needs no count)."""
    return len(text.encode("utf-8")) <= max_tokens or count_tokens(text) <= max_tokens
