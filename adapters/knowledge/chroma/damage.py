"""A damaged dataset as a domain error: Chroma's internal failures mapped, at this boundary, to DatasetDamaged.

Chroma reports a broken collection with chromadb.errors.InternalError ("Failed to apply logs to the
hnsw segment writer", "Error creating hnsw segment reader: Error deserializing pickle file",
"Error finding id", "Error purging logs" ...), which no retry fixes. Every Chroma call of the knowledge
base goes through ChromaStore._run, which turns such an error on a known dataset into DatasetDamaged:
one line naming the dataset and the two commands that deal with it, `kb datasets check NAME` (what is
wrong) and `kb datasets rebuild NAME` (re-embed from the stored chunks). A crash inside Chroma's native
code (a segfault) cannot be caught in the process; `kb datasets check` names that dataset as well.
"""

from __future__ import annotations

import shlex

from core.errors import KnowledgeBaseError
from core.messages import phrase

REASON_LIMIT = 120  # characters of Chroma's own message kept in the error line
_TRANSIENT = ("database is locked", "timed out", "timeout")


class DatasetDamaged(KnowledgeBaseError):
    """A dataset's Chroma collections cannot be used as they are; `kb datasets rebuild` repairs them."""

    code = "dataset_damaged"

    def __init__(self, dataset: str, reason: str, *, detail: str | None = None) -> None:
        message = phrase("error.dataset_damaged", dataset=dataset, reason=reason, name=shlex.quote(dataset))
        super().__init__(message, detail=detail)
        self.dataset = dataset
        self.reason = reason


def chroma_reason(exc: BaseException) -> str:
    """Chroma's message, shortened: the last two clauses of its chain, which name the part that failed."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    last = text.rsplit(": ", 2)
    short = ": ".join(last[-2:]) if len(last) > 1 else text
    return short if len(short) <= REASON_LIMIT else short[: REASON_LIMIT - 1] + "…"


def is_damage(exc: BaseException) -> bool:
    """True for Chroma's internal errors, which no retry fixes (a busy or slow server aside)."""
    try:
        from chromadb.errors import InternalError
    except ImportError:  # pragma: no cover - chromadb is a dependency
        return False
    if not isinstance(exc, InternalError):
        return False
    text = str(exc).lower()
    return not any(word in text for word in _TRANSIENT)


def chroma_failure(exc: BaseException, dataset: str | None) -> KnowledgeBaseError:
    """The domain error of a failed Chroma call: DatasetDamaged for damage on a known dataset, else generic."""
    if dataset is not None and is_damage(exc):
        return DatasetDamaged(dataset, f"Chroma: {chroma_reason(exc)}", detail=repr(exc))
    return KnowledgeBaseError(phrase("error.knowledge_store_failed"), detail=repr(exc))
