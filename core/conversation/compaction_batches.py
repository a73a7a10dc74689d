"""Pure sizing for compaction: turn tokens, summary batches, the recent window and the summary's room."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from core.budget import clip, count_tokens
from core.models import Turn

MIN_RECENT_TOKENS = 128


@dataclass(frozen=True, slots=True)
class BatchLimits:
    """What one summary call may read: per question, per answer, per batch.

    See docs/design.md#batches-and-the-watermark.
    """

    question_tokens: int = 2000
    answer_tokens: int = 3500
    batch_tokens: int = 6000


def turn_tokens(turn: Turn) -> int:
    """Estimated tokens of one turn: its question plus its answer."""
    return count_tokens(turn.question) + count_tokens(turn.answer)


def turns_tokens(turns: Iterable[Turn]) -> int:
    """Estimated tokens of several turns."""
    return sum(turn_tokens(turn) for turn in turns)


def clip_turn(turn: Turn, limits: BatchLimits) -> Turn:
    """The turn as the summary model reads it: question and answer each clipped to their limit."""
    question = clip(turn.question, limits.question_tokens)
    answer = clip(turn.answer, limits.answer_tokens)
    if question == turn.question and answer == turn.answer:
        return turn
    return Turn(turn.record_id, question, answer)


def take_batch(page: Sequence[Turn], limits: BatchLimits) -> list[Turn]:
    """The next summary batch: clipped turns in order while they fit batch_tokens.

    The first turn is always taken, so a turn that alone exceeds the batch limit forms its own batch
    instead of being skipped; the batch stops before the first turn that would overflow it.
    """
    batch: list[Turn] = []
    used = 0
    for turn in page:
        clipped = clip_turn(turn, limits)
        size = turn_tokens(clipped)
        if batch and used + size > limits.batch_tokens:
            break
        batch.append(clipped)
        used += size
    return batch


def recent_window_budget(budget: int, summary_max_tokens: int) -> int:
    """Tokens the raw recent turns may use once compaction is needed: max(128, budget - summary room)."""
    return max(MIN_RECENT_TOKENS, budget - summary_max_tokens)


def summary_room(budget: int, summary_max_tokens: int) -> int:
    """Tokens the summary message (label included) may use, so summary + recent window fit the budget."""
    return max(0, min(summary_max_tokens, budget - recent_window_budget(budget, summary_max_tokens)))


def trim_recent(turns: Sequence[Turn], window_tokens: int) -> list[Turn]:
    """Drop the oldest turns until the rest fit window_tokens, always keeping the latest turn."""
    kept = list(turns)
    total = turns_tokens(kept)
    while len(kept) > 1 and total > window_tokens:
        total -= turn_tokens(kept.pop(0))
    return kept
