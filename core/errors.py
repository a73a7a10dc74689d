"""Domain errors. Each carries a user-safe message (a catalogue phrase, shown in the reader's language);
details go to logs only.

KbError
 ├── InvalidInput          bad question, unknown search mode, blank query ...
 │    └── QuestionTooLong  question over KB_QUESTION_MAX_TOKENS (the measured size is in the message)
 ├── ModelError
 │    ├── ModelUnavailable  timeouts, 5xx, connection errors after retries
 │    │    └── ModelRejected  400/401/403/404/422: a setting is wrong (key, model name, URL); retrying cannot help
 │    ├── ModelTruncated    finish_reason=length: the truncated text is never used
 │    └── ModelOutputInvalid  empty output, JSON that does not match the contract
 ├── KnowledgeBaseError     the vector store or keyword index failed
 ├── StoreUnavailable       the conversation database cannot be reached
 ├── SourceUnreadable       a synced source (Slack channel, export, site) cannot be read whole
 ├── NotFound
 ├── NotAllowed
 └── ContextConflict        an optimistic write lost to a concurrent one
"""

from __future__ import annotations

from core.messages import Phrase, phrase


class KbError(Exception):
    """Base error with a user-facing message, a catalogue phrase put into the reader's language when shown."""

    code = "error"

    def __init__(self, message: Phrase, *, detail: str | None = None) -> None:
        super().__init__(detail or message.text("en"))
        self.phrase = message

    def message(self, lang: str) -> str:
        """The user-facing message in the user's language (the catalogue's language rule)."""
        return self.phrase.text(lang)

    def in_both_languages(self) -> str:
        """The message in Chinese and English, for a reader whose language is not known."""
        return self.phrase.in_both_languages()


class InvalidInput(KbError):
    code = "invalid_input"


class QuestionTooLong(InvalidInput):
    code = "question_too_long"

    def __init__(self, tokens: int, limit: int) -> None:
        super().__init__(phrase("error.question_too_long", tokens=tokens, limit=limit))
        self.tokens = tokens
        self.limit = limit


class ModelError(KbError):
    code = "model_error"


class ModelUnavailable(ModelError):
    code = "model_unavailable"

    def __init__(self, detail: str = "") -> None:
        super().__init__(phrase("error.model_unavailable"), detail=detail or None)


class ModelRejected(ModelUnavailable):
    """The endpoint answered but refused the request for good (a wrong key, model name or URL)."""

    code = "model_rejected"

    def __init__(self, detail: str = "", *, status: int | None = None) -> None:
        self.status = status
        KbError.__init__(
            self, phrase("error.model_rejected", status=self.status_label), detail=detail or None
        )

    @property
    def status_label(self) -> str:
        """ "HTTP 401", or "HTTP 4xx" when the status is not known."""
        return f"HTTP {self.status}" if self.status else "HTTP 4xx"


class ModelTruncated(ModelError):
    code = "model_truncated"

    def __init__(self, detail: str = "") -> None:
        super().__init__(phrase("error.model_truncated"), detail=detail or None)


class ModelOutputInvalid(ModelError):
    code = "model_output_invalid"

    def __init__(self, detail: str = "") -> None:
        super().__init__(phrase("error.model_output_invalid"), detail=detail or None)


class AnswerWithoutContent(ModelOutputInvalid):
    """The model's answer holds no words of its own: only citation markers or copied prompt markup."""

    code = "answer_without_content"


class KnowledgeBaseError(KbError):
    code = "knowledge_base_error"


class StoreUnavailable(KbError):
    code = "store_unavailable"

    def __init__(self, detail: str = "") -> None:
        super().__init__(phrase("error.store_unavailable"), detail=detail or None)


class SourceUnreadable(KbError):
    """A synced source could not be read whole (core.sources): the sync changes nothing."""

    code = "source_unreadable"

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(phrase("error.source_unreadable", source=source, reason=reason))
        self.reason = reason


class NotFound(KbError):
    code = "not_found"


class NotAllowed(KbError):
    code = "not_allowed"


class ContextConflict(KbError):
    code = "context_conflict"

    def __init__(self, detail: str = "") -> None:
        super().__init__(phrase("error.context_conflict"), detail=detail or None)
