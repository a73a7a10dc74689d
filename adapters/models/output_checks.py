"""Checks on what small local models really send: JSON inside prose or fences, and repetition loops.

Seen on llama.cpp with Qwen2.5 0.5B/1.5B (issue 17): without a response format the 1.5B wraps its JSON in
```json fences or puts a sentence before it, and the 0.5B can repeat one phrase ("遗嘱是否需要？遗嘱是否需要？…")
inside a JSON string until the token cap. No library checks these, so they are small pure functions here.
"""

from __future__ import annotations

import json
import re

_FENCED = re.compile(r"```[a-zA-Z0-9_-]*[ \t]*\n?(.*?)\n?[ \t]*```", re.DOTALL)
# A repetition loop: the text ends with one unit of 1..MAX_UNIT characters repeated at least REPEATS times
# and covering at least MIN_SPAN characters ("ha" twice is speech, the same clause eight times is a loop).
MAX_UNIT = 40
REPEATS = 8
MIN_SPAN = 48
# An answer may legitimately repeat a character (a "=====" rule) or a short cell ("| — | — |"): it loops only
# when a unit of 2+ characters comes 10+ times over 120+ characters.


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def _first_object(text: str) -> str | None:
    """The first complete JSON object or array embedded in text, as its own substring."""
    decoder = json.JSONDecoder()
    for start, char in enumerate(text):
        if char not in "{[":
            continue
        try:
            _, end = decoder.raw_decode(text, start)
        except ValueError:
            continue
        return text[start:end]
    return None


def extract_json(text: str) -> str | None:
    """The JSON document in a model's reply: the whole text, a fenced block, or the first embedded object.

    None when there is none (prose only, or JSON cut off mid-string).
    """
    stripped = text.strip()
    if _is_json(stripped):
        return stripped
    for fenced in _FENCED.finditer(stripped):
        body = fenced.group(1).strip()
        if _is_json(body):
            return body
    return _first_object(stripped)


def repetition_loop(
    text: str, *, min_unit: int = 1, repeats: int = REPEATS, min_span: int = MIN_SPAN, distinct: int = 1
) -> str | None:
    """The repeated unit when text ends in a loop (`repeats`+ copies of a unit of `min_unit`..MAX_UNIT
    characters with `distinct`+ different non-space characters, `min_span`+ characters in all), else None."""
    tail = text.rstrip()
    for unit_length in range(min_unit, MAX_UNIT + 1):
        copies = max(repeats, -(-min_span // unit_length))
        span = unit_length * copies
        if len(tail) < span:
            break
        unit = tail[-unit_length:]
        if len(set(unit) - set(" \t\n")) < distinct:
            continue
        if tail[-span:] == unit * copies:
            return unit
    return None


def answer_loop(text: str) -> str | None:
    """repetition_loop for answers, which may legitimately repeat a character (a "=====" rule) or a short
    cell ("| — | — |"): a unit of 2+ different characters 10+ times over 120+ characters."""
    return repetition_loop(text, min_unit=2, repeats=10, min_span=120, distinct=2)
