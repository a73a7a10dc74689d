"""Store errors: vendor database errors mapped to core.errors types with user-safe messages."""

from __future__ import annotations

from core.errors import InvalidInput, NotAllowed, NotFound, StoreUnavailable

__all__ = [
    "StoreUnavailable",
    "conversation_not_found",
    "record_not_found",
    "record_not_pending",
    "record_to_answer_not_found",
    "unstorable_text",
]


def conversation_not_found(detail: str = "") -> NotFound:
    """A record or context was written for a conversation that was never created."""
    return NotFound(
        "会话不存在,请重新开始对话。",
        "The conversation does not exist; please start a new one.",
        detail=detail or None,
    )


def record_not_found(record_id: int) -> NotFound:
    return NotFound(f"找不到记录 {record_id}。", f"Record {record_id} was not found.")


def record_to_answer_not_found(record_id: int) -> NotFound:
    """Answering again a record that does not exist, or not in the conversation asking."""
    return NotFound(
        "找不到要重新回答的问题。", f"The question to answer again (record {record_id}) was not found."
    )


def record_not_pending(record_id: int, status: str) -> NotAllowed:
    """complete_record on a record that is no longer being generated (answered, failed, interrupted)."""
    return NotAllowed(
        f"记录 {record_id} 已结束(状态:{status}),不能再写入回答;请重新提问。",
        f"Record {record_id} is already {status}, so no answer can be written to it; ask again instead.",
    )


def unstorable_text(detail: str = "") -> InvalidInput:
    """Input the database cannot hold: NUL characters, unpaired surrogates, out-of-range numbers."""
    return InvalidInput(
        "内容包含无法保存的字符或数值(例如空字符、乱码或超出范围的数字),请检查后重试。",
        "The input contains characters or values that cannot be stored (such as NUL, broken Unicode "
        "or an out-of-range number); please check it.",
        detail=detail or None,
    )
