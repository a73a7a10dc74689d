"""The history sent to the model after compaction: the labelled summary first, then recent turns in pairs."""

from __future__ import annotations

from collections.abc import Sequence

from core.budget import clip, count_tokens
from core.conversation.compaction_batches import MIN_RECENT_TOKENS, turn_tokens
from core.messages import LANGUAGES, text
from core.models import Message, Turn
from core.prompt_markup import Markup, element, message, turn_messages

MIN_CLIPPED_PART_TOKENS = 64


def summary_label(lang: str) -> str:
    """The label that marks the summary as history data, in the conversation's language."""
    return text("compaction.summary_label", lang)


def summary_message(summary: str, lang: str) -> Message:
    """The summary as a user message (never system: it is data, not instructions), inside an escaped
    <summary> element so that it cannot pose as a question or as more history."""
    return message("user", Markup(f"{summary_label(lang)}\n"), element("summary", summary, block=True))


def label_overhead() -> int:
    """Tokens the label and the element add to a summary in the wordier of the two languages."""
    return max(count_tokens(summary_message("", lang).content) for lang in LANGUAGES) + 1


def summary_message_tokens(summary: str) -> int:
    """Tokens the summary will occupy once sent (label and escaping included); 0 without a summary."""
    return count_tokens(element("summary", summary).text) + label_overhead() if summary else 0


def _clip_turn_to(turn: Turn, budget: int, lang: str) -> Turn:
    """Clip an oversized turn to about budget tokens, sharing it between question and answer.

    See docs/design.md#the-history-sent-after-compaction.
    """
    question_budget = min(count_tokens(turn.question), max(MIN_CLIPPED_PART_TOKENS, budget // 2))
    answer_budget = max(MIN_CLIPPED_PART_TOKENS, budget - question_budget)
    return Turn(
        turn.record_id,
        clip(turn.question, question_budget, lang=lang),
        clip(turn.answer, answer_budget, lang=lang),
    )


def history_messages(
    summary: str, recent: Sequence[Turn], *, budget: int, lang: str
) -> tuple[tuple[Message, ...], tuple[Turn, ...]]:
    """Messages for the model and the turns as sent: recent turns stay whole while they fit the budget
    left by the summary; only a turn that does not fit is clipped, with the truncation marker."""
    messages: list[Message] = []
    if summary:
        messages.append(summary_message(summary, lang))
    remaining = max(MIN_RECENT_TOKENS, budget - sum(count_tokens(m.content) for m in messages))
    sent: list[Turn] = []
    for turn in recent:
        size = turn_tokens(turn)
        kept = turn if size <= remaining else _clip_turn_to(turn, remaining, lang)
        remaining = max(0, remaining - size)
        sent.append(kept)
        messages.extend(turn_messages(kept.question, kept.answer))
    return tuple(messages), tuple(sent)


def messages_tokens(messages: Sequence[Message]) -> int:
    """Estimated tokens of the messages' contents (what the budget measures)."""
    return sum(count_tokens(message.content) for message in messages)
