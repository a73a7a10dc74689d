"""Domain errors. Each carries a user-safe message in Chinese and English; details go to logs only.

KbError
 ├── InvalidInput          bad question, unknown search mode, blank query ...
 │    └── QuestionTooLong  question over KB_QUESTION_MAX_TOKENS (the measured size is in the message)
 ├── ModelError
 │    ├── ModelUnavailable  timeouts, 5xx, connection errors after retries
 │    ├── ModelTruncated    finish_reason=length: the truncated text is never used
 │    └── ModelOutputInvalid  empty output, JSON that does not match the contract
 ├── KnowledgeBaseError     the vector store or keyword index failed
 ├── StoreUnavailable       the conversation database cannot be reached
 ├── NotFound
 ├── NotAllowed
 └── ContextConflict        an optimistic write lost to a concurrent one
"""

from __future__ import annotations


class KbError(Exception):
    """Base error with a user-facing message in both languages."""

    code = "error"

    def __init__(self, zh: str, en: str, *, detail: str | None = None) -> None:
        super().__init__(detail or en)
        self.zh = zh
        self.en = en

    def message(self, lang: str) -> str:
        """The user-facing message in the user's language ("zh" or "en")."""
        return self.zh if lang == "zh" else self.en


class InvalidInput(KbError):
    code = "invalid_input"


class QuestionTooLong(InvalidInput):
    code = "question_too_long"

    def __init__(self, tokens: int, limit: int) -> None:
        super().__init__(
            f"问题太长:约 {tokens} 个 token,上限为 {limit}。请缩短后再问。",
            f"The question is too long: about {tokens} tokens, the limit is {limit}. Please shorten it.",
        )
        self.tokens = tokens
        self.limit = limit


class ModelError(KbError):
    code = "model_error"


class ModelUnavailable(ModelError):
    code = "model_unavailable"

    def __init__(self, detail: str = "") -> None:
        super().__init__(
            "模型服务暂时不可用,请稍后再试。",
            "The model service is unavailable right now; please try again later.",
            detail=detail or None,
        )


class ModelTruncated(ModelError):
    code = "model_truncated"

    def __init__(self, detail: str = "") -> None:
        super().__init__(
            "模型输出被截断,结果未被使用。",
            "The model's output was cut off, so it was not used.",
            detail=detail or None,
        )


class ModelOutputInvalid(ModelError):
    code = "model_output_invalid"

    def __init__(self, detail: str = "") -> None:
        super().__init__(
            "模型返回的内容无效。",
            "The model returned an invalid result.",
            detail=detail or None,
        )


class KnowledgeBaseError(KbError):
    code = "knowledge_base_error"


class StoreUnavailable(KbError):
    code = "store_unavailable"

    def __init__(self, detail: str = "") -> None:
        super().__init__(
            "会话存储暂时不可用,请稍后再试。",
            "The conversation store is unavailable right now; please try again later.",
            detail=detail or None,
        )


class NotFound(KbError):
    code = "not_found"


class NotAllowed(KbError):
    code = "not_allowed"


class ContextConflict(KbError):
    code = "context_conflict"

    def __init__(self, detail: str = "") -> None:
        super().__init__(
            "会话上下文已被其他操作更新,请重试。",
            "The conversation context was updated by another operation; please retry.",
            detail=detail or None,
        )
