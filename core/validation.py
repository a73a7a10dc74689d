"""Question validation before anything is stored or any model is called."""

from __future__ import annotations

import unicodedata

from core.budget import count_tokens
from core.errors import InvalidInput, QuestionTooLong
from core.messages import phrase


def _is_garbage(text: str) -> bool:
    """Binary or mojibake input: NUL/control characters, replacement characters or unassigned code points."""
    if "\x00" in text:
        return True
    suspicious = 0
    for char in text:
        category = unicodedata.category(char)
        if char == "\ufffd" or (category in {"Cc", "Cs", "Co", "Cn"} and char not in "\n\r\t"):
            suspicious += 1
    return suspicious > max(2, len(text) // 20)


def validate_question(text: str | None, *, max_tokens: int) -> str:
    """The question stripped; raises InvalidInput (blank, binary) or QuestionTooLong (with its measured size)."""
    question = (text or "").strip()
    if not question:
        raise InvalidInput(phrase("error.empty_question"))
    if _is_garbage(question):
        raise InvalidInput(phrase("error.unreadable_question"))
    tokens = count_tokens(question)
    if tokens > max_tokens:
        raise QuestionTooLong(tokens, max_tokens)
    return question
