"""Removes a model's leading <think>...</think> reasoning block from its answer, whole or streamed."""

from __future__ import annotations

from typing import Literal

OPEN, CLOSE = "<think>", "</think>"


class ThinkFilter:
    """Feed text pieces as they arrive; get back only what follows a leading <think> block.

    Text that does not start with <think> (after whitespace) passes through unchanged. An unterminated
    block is reasoning that never ended: nothing of it is returned.
    """

    def __init__(self) -> None:
        self._buffer = ""
        self._state: Literal["start", "inside", "after", "through"] = "start"

    def feed(self, piece: str) -> str:
        """The visible part of this piece (may be "" while a possible <think> block is undecided)."""
        if self._state == "through":
            return piece
        self._buffer += piece
        if self._state == "start":
            head = self._buffer.lstrip()
            if head.startswith(OPEN):
                self._state = "inside"
            elif OPEN.startswith(head):  # still could become <think> (or is only whitespace so far)
                return ""
            else:
                return self._release("through")
        if self._state == "inside":
            end = self._buffer.find(CLOSE)
            if end < 0:
                return ""
            self._buffer = self._buffer[end + len(CLOSE) :]
            self._state = "after"
        self._buffer = self._buffer.lstrip()  # "after": drop the blank lines that follow </think>
        return self._release("through") if self._buffer else ""

    def flush(self) -> str:
        """Whatever is still held back when the text ends (nothing of an unterminated block)."""
        held = self._buffer if self._state == "start" else ""
        self._buffer = ""
        return held

    def _release(self, state: Literal["through"]) -> str:
        out, self._buffer, self._state = self._buffer, "", state
        return out


def strip_thinking(text: str) -> str:
    """text without a leading <think>...</think> block."""
    stripper = ThinkFilter()
    return stripper.feed(text) + stripper.flush()
