"""Progress events streamed by the pipeline; every front end (CLI, Slack) renders the same stream."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from core.record import Record


@dataclass(frozen=True, slots=True)
class Accepted:
    """The question's record is stored (pending): a front end may now show that it is being worked on."""

    record: Record
    phase: Literal["accepted"] = "accepted"


@dataclass(frozen=True, slots=True)
class ContextLoading:
    """Reading the conversation's summary and recent turns."""

    phase: Literal["context"] = "context"


@dataclass(frozen=True, slots=True)
class Compacting:
    """A summary call is really happening (fires at most once per question)."""

    phase: Literal["compacting"] = "compacting"


@dataclass(frozen=True, slots=True)
class Queued:
    """Another question of this conversation is being answered first."""

    position: int = 1
    phase: Literal["queued"] = "queued"


@dataclass(frozen=True, slots=True)
class Retrieving:
    """A search is running for round N with this query."""

    round: int
    query: str
    phase: Literal["retrieving"] = "retrieving"


@dataclass(frozen=True, slots=True)
class Assessed:
    """The evidence of round N was assessed."""

    round: int
    sufficient: bool
    missing: str = ""
    phase: Literal["assessed"] = "assessed"


@dataclass(frozen=True, slots=True)
class Generating:
    """The answer is being written."""

    rounds: int = 0
    stop_reason: str = ""
    phase: Literal["generating"] = "generating"


@dataclass(frozen=True, slots=True)
class AnswerDelta:
    """A piece of streamed answer text."""

    text: str
    phase: Literal["delta"] = "delta"


@dataclass(frozen=True, slots=True)
class Notice:
    """A visible notice (uncertainty, degraded engine) that is also appended to the answer."""

    text: str
    kind: str = "uncertainty"
    phase: Literal["notice"] = "notice"


@dataclass(frozen=True, slots=True)
class Done:
    """The record is persisted and final; nothing follows."""

    record: Record
    phase: Literal["done"] = "done"


@dataclass(frozen=True, slots=True)
class Failed:
    """The question failed; nothing follows. message is in the user's language. record is the stored
    record as it ended (failed, or for code "duplicate" the record already stored under the event key),
    None when nothing was stored (bad input, an unknown record to answer again)."""

    code: str
    message: str
    record: Record | None = None
    phase: Literal["error"] = "error"


Progress = (
    Accepted
    | ContextLoading
    | Compacting
    | Queued
    | Retrieving
    | Assessed
    | Generating
    | AnswerDelta
    | Notice
    | Done
    | Failed
)
