"""Frozen value types shared by every layer: documents, hits, turns, retrieval outcomes (records: core.record)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from core.trace import RetrievalTrace, StopReason

SearchMode = Literal["embedding", "keywords", "blend"]
SEARCH_MODES: tuple[SearchMode, ...] = ("embedding", "keywords", "blend")
ClaimPolicy = Literal["mark", "drop_sentence", "notice_only", "off"]  # how unsupported claims are presented
RetrievalMode = Literal["auto", "single", "multi"]
RETRIEVAL_MODES: tuple[RetrievalMode, ...] = ("auto", "single", "multi")


@dataclass(frozen=True, slots=True)
class Location:
    """Where in its document a chunk is: page, slide, sheet and row range (0 / "" when not applicable).

    Pages, slides and rows count from 1 as their application shows them (rows as the spreadsheet
    numbers them, the header row included). ``within`` is the numbered part (第八十一条, Article 5) a chunk
    begins inside when its text continues one from the chunk before (a long article split over chunks);
    citations name it (docs/design.md#citations), it is no place of its own (not in label or bool).
    """

    page: int = 0
    slide: int = 0
    sheet: str = ""
    first_row: int = 0
    last_row: int = 0
    within: str = ""

    def __bool__(self) -> bool:
        return bool(self.page or self.slide or self.sheet or self.first_row)

    def same_place(self, other: Location) -> bool:
        """Whether one chunk may hold text of both: same page, slide and sheet (rows may differ)."""
        return self.page == other.page and self.slide == other.slide and self.sheet == other.sheet

    def through(self, other: Location) -> Location:
        """This location extended to other's last row (the span of a chunk packed from the two)."""
        last = other.last_row or other.first_row
        if not last:
            return self
        return Location(
            self.page, self.slide, self.sheet, self.first_row or other.first_row, last, self.within
        )

    def label(self) -> str:
        """How a citation shows it: "p. 12", "slide 3", "sheet Budget, rows 2–40" ("" when nowhere)."""
        parts: list[str] = []
        if self.page:
            parts.append(f"p. {self.page}")
        if self.slide:
            parts.append(f"slide {self.slide}")
        if self.sheet:
            parts.append(f"sheet {self.sheet}")
        if self.first_row:
            last = self.last_row or self.first_row
            parts.append(f"row {last}" if last == self.first_row else f"rows {self.first_row}–{last}")
        return ", ".join(parts)

    def to_dict(self) -> dict[str, int | str]:
        """The set fields only (as chunk metadata and in citations): page, slide, sheet, row_start, row_end,
        within."""
        items: dict[str, int | str] = {}
        if self.page:
            items["page"] = self.page
        if self.slide:
            items["slide"] = self.slide
        if self.sheet:
            items["sheet"] = self.sheet
        if self.first_row:
            items["row_start"] = self.first_row
            items["row_end"] = self.last_row or self.first_row
        if self.within:
            items["within"] = self.within
        return items

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> Location:
        """The location in a metadata or citation mapping (missing or malformed fields are unset)."""

        def number(key: str) -> int:
            value = values.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0

        sheet, within = values.get("sheet"), values.get("within")
        return cls(
            page=number("page"),
            slide=number("slide"),
            sheet=sheet if isinstance(sheet, str) else "",
            first_row=number("row_start"),
            last_row=number("row_end"),
            within=within if isinstance(within, str) else "",
        )


NOWHERE = Location()


@dataclass(frozen=True, slots=True)
class DocumentPart:
    """A stretch of a read document with one location: a PDF page, a slide, a sheet row, a whole file.

    markdown is the part's text as Markdown. heading_path, when set (even to ()), is where the part
    stands in the document (a slide's title, a sheet's name): headings met before it no longer apply.
    When None, the headings of the parts before it carry on (a PDF page continues the chapter of the
    page before).
    """

    markdown: str
    location: Location = NOWHERE
    heading_path: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Chunk:
    """One retrievable paragraph of a document, as produced by chunking."""

    text: str
    heading_path: tuple[str, ...]
    position: int
    tokens: int
    location: Location = NOWHERE


@dataclass(frozen=True, slots=True)
class DocumentInfo:
    """A document registered in a dataset."""

    dataset: str
    document_id: str
    name: str
    source: str
    content_hash: str
    enabled: bool
    chunk_count: int
    updated_at: float = 0.0
    link: str = ""  # where a reader opens it (a synced page's URL, a Slack thread's permalink); "" for files


@dataclass(frozen=True, slots=True)
class Hit:
    """A paragraph returned by a search, with its similarity score (higher is better)."""

    id: str
    content: str
    score: float
    dataset: str
    document_id: str
    document_name: str
    heading: str = ""
    source: str = ""
    position: int = 0
    location: Location = NOWHERE
    title: str = ""  # the document's own title (its first heading, PDF/Office metadata), "" when unknown


@dataclass(frozen=True, slots=True)
class SearchRequest:
    """Validated parameters of one knowledge-base search."""

    query: str
    datasets: tuple[str, ...]
    mode: SearchMode = "blend"
    threshold: float = 0.0
    limit: int = 10


@dataclass(frozen=True, slots=True)
class ConversationKey:
    """Where a conversation lives: a Slack thread, a terminal session, ..."""

    source: str
    team_id: str = ""
    channel_id: str = ""
    thread_ts: str = ""

    def as_id(self) -> str:
        """A stable string id for this key."""
        return ":".join((self.source, self.team_id, self.channel_id, self.thread_ts))

    @classmethod
    def from_id(cls, conversation_id: str) -> ConversationKey:
        """The key whose as_id() is conversation_id (every stored id has at least three colons)."""
        parts = conversation_id.split(":", 3)
        parts += [""] * (4 - len(parts))
        return cls(source=parts[0], team_id=parts[1], channel_id=parts[2], thread_ts=parts[3])


@dataclass(frozen=True, slots=True)
class ConversationScope:
    """What a conversation searches, fixed at its first question: datasets and the two modes."""

    datasets: tuple[str, ...] = ()
    search_mode: SearchMode | None = None
    retrieval_mode: RetrievalMode | None = None

    def to_dict(self) -> dict[str, Any]:  # JSON: the conversation's stored scope
        return {
            "datasets": list(self.datasets),
            "search_mode": self.search_mode,
            "retrieval_mode": self.retrieval_mode,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ConversationScope:  # JSON: the conversation's stored scope
        """The scope stored as JSON; unknown modes read back as None (the configured default)."""
        search = data.get("search_mode")
        retrieval = data.get("retrieval_mode")
        return cls(
            datasets=tuple(str(name) for name in data.get("datasets") or ()),
            search_mode=search if search in SEARCH_MODES else None,
            retrieval_mode=retrieval if retrieval in RETRIEVAL_MODES else None,
        )


class RecordStatus(StrEnum):
    """Lifecycle of one question's record."""

    PENDING = "pending"
    ANSWERED = "answered"
    FAILED = "failed"
    INTERRUPTED = "interrupted"


@dataclass(frozen=True, slots=True)
class Turn:
    """A completed question/answer pair used as history, with the documents its answer cited."""

    record_id: int
    question: str
    answer: str
    cited: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RecordOpening:
    """What opening a new record stores: the conversation (created when new), the scope it keeps from its
    first question, and the question with its idempotency key, asker and reply address."""

    conversation: ConversationKey
    question: str
    scope: ConversationScope = field(default_factory=ConversationScope)
    event_key: str | None = None
    asked_by: str | None = None
    reply_to: str | None = None


@dataclass(frozen=True, slots=True)
class ContextSnapshot:
    """The persistent rolling summary of a conversation and its watermark."""

    summary: str = ""
    through_record_id: int = 0
    compacted_rounds: int = 0
    revision: int = 0
    updated_at: float = 0.0


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage reported by a model call."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens, self.completion_tokens + other.completion_tokens
        )

    def to_dict(self) -> dict[str, int]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens}


@dataclass(frozen=True, slots=True)
class Message:
    """A chat message sent to a model."""

    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True, slots=True)
class Completion:
    """The result of a non-streaming model call."""

    text: str
    finish_reason: str | None = "stop"
    usage: Usage = Usage()
    model: str = ""


@dataclass(frozen=True, slots=True)
class Assessment:
    """The evidence assessor's verdict: {sufficient, missing, queries}."""

    sufficient: bool
    missing: str = ""
    queries: tuple[str, ...] = ()
    overruled: bool = False  # a model's "sufficient" reversed by the deterministic key-term check
    # Not sufficient only in degree: every part is partly supported and nothing it names or asks for is
    # absent. The loop searches on; the answer carries no uncertainty notice (docs/design.md#the-uncertainty-notice).
    partial: bool = False


@dataclass(frozen=True, slots=True)
class AnswerRequest:
    """What the answer role receives: the question, history for understanding, and this turn's evidence."""

    question: str
    evidence: tuple[Hit, ...]
    history: tuple[Message, ...] = ()
    sufficient: bool = True
    stop_reason: str = ""
    missing: str = ""
    lang: str = "zh"
    standalone: str = ""  # the rewritten, self-contained question (what retrieval searched)


@dataclass(frozen=True, slots=True)
class RetrievalOutcome:
    """What retrieval found for one question, and how (core.trace.RetrievalTrace)."""

    hits: tuple[Hit, ...]
    sufficient: bool
    stop_reason: StopReason
    missing: str = ""
    trace: RetrievalTrace = field(default_factory=RetrievalTrace)
    partial: bool = False  # not sufficient only in degree (Assessment.partial): no notice
    usage: Usage = Usage()
    model_calls: int = 0


def _flag(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True, slots=True)
class ContextStats:
    """What loading a question's history found: stored as the record's details["context"].

    The bounded loader reports enabled, compacted, recent_rounds and estimated_tokens; the compacting one
    also the snapshot it used (revision, compacted_rounds, through_record_id), the token budget, whether
    the history exceeded it and why it compacted or not (docs/design.md#compaction). None: not reported
    (by this loader, or by an older record). summary_calls and compaction_error are stored only when set.
    """

    enabled: bool | None = None
    compacted: bool | None = None
    revision: int | None = None
    compacted_rounds: int | None = None
    through_record_id: int | None = None
    recent_rounds: int | None = None
    token_budget: int | None = None
    threshold_exceeded: bool | None = None
    compaction_reason: str | None = None
    estimated_tokens: int | None = None
    summary_calls: int = 0
    compaction_error: str = ""

    def to_json(self) -> dict[str, object]:
        """The reported fields, by name."""
        data: dict[str, object] = {
            name: value for name in _CONTEXT_REPORTED if (value := getattr(self, name)) is not None
        }
        if self.summary_calls:
            data["summary_calls"] = self.summary_calls
        if self.compaction_error:
            data["compaction_error"] = self.compaction_error
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ContextStats:
        """Stored statistics (a missing or malformed field is not reported)."""
        reason, error = data.get("compaction_reason"), data.get("compaction_error")
        return cls(
            enabled=_flag(data.get("enabled")),
            compacted=_flag(data.get("compacted")),
            revision=_count(data.get("revision")),
            compacted_rounds=_count(data.get("compacted_rounds")),
            through_record_id=_count(data.get("through_record_id")),
            recent_rounds=_count(data.get("recent_rounds")),
            token_budget=_count(data.get("token_budget")),
            threshold_exceeded=_flag(data.get("threshold_exceeded")),
            compaction_reason=reason if isinstance(reason, str) else None,
            estimated_tokens=_count(data.get("estimated_tokens")),
            summary_calls=_count(data.get("summary_calls")) or 0,
            compaction_error=error if isinstance(error, str) else "",
        )


_CONTEXT_REPORTED = (
    "enabled",
    "compacted",
    "revision",
    "compacted_rounds",
    "through_record_id",
    "recent_rounds",
    "token_budget",
    "threshold_exceeded",
    "compaction_reason",
    "estimated_tokens",
)


@dataclass(frozen=True, slots=True)
class LoadedContext:
    """History prepared for one question: messages for the model, the turns, the summary as sent (for the
    rewrite; it stays in the conversation's context, not in the record) and the statistics."""

    messages: tuple[Message, ...] = ()
    turns: tuple[Turn, ...] = ()
    metadata: ContextStats = ContextStats()
    summary: str = ""
    usage: Usage = Usage()


@dataclass(frozen=True, slots=True)
class CompactionReport:
    """Outcome of a manual compaction request."""

    compacted: bool
    compacted_rounds: int
    revision: int
    through_record_id: int
    reason: str  # "token_budget_exceeded" | "under_budget" | "no_history" | "failed: ..."
    summary_calls: int = 0
