"""Ports: the narrow async interfaces core needs from the outside world (typing.Protocol)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, Protocol

from core.events import Progress
from core.models import (
    AnswerRequest,
    Assessment,
    Chunk,
    Completion,
    ContextSnapshot,
    ConversationKey,
    ConversationScope,
    DocumentInfo,
    Hit,
    LoadedContext,
    Message,
    RecordOpening,
    RecordStatus,
    RetrievalMode,
    RetrievalOutcome,
    SearchMode,
    SearchRequest,
    Turn,
    Usage,
)
from core.record import NO_DETAILS, Record, RecordDetails, SuppliedQuote
from core.sources.models import Fetched, SourceSpec, SourceState, SyncedDocument, SyncReport


class Embedder(Protocol):
    """Turns text into vectors. CPU-bound implementations run in worker threads."""

    @property
    def name(self) -> str:
        """Model name recorded on every dataset built with it."""
        ...

    @property
    def dimension(self) -> int: ...

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text. Raises KnowledgeBaseError or ModelUnavailable."""
        ...

    async def embed_query(self, text: str) -> list[float]: ...


class SentenceMeaning(Protocol):
    """How close in meaning texts are to other texts (an offline sentence encoder). Synchronous and CPU-bound:
    call it from a worker thread."""

    def similarities(self, texts: Sequence[str], others: Sequence[str]) -> list[list[float]]:
        """The cosine similarity of every text to every other text: one row per text."""
        ...


class KnowledgeBase(Protocol):
    """Searchable datasets of paragraphs."""

    async def search(self, request: SearchRequest) -> list[Hit]:
        """Hits best first, at most request.limit, score >= request.threshold, disabled documents excluded.

        No datasets -> [] without calling anything. Raises InvalidInput for a blank query or unknown mode.
        """
        ...


class ReferenceResolver(Protocol):
    """Finds the paragraphs that evidence refers to (docs/design.md#following-references)."""

    async def referenced(
        self, evidence: Sequence[Hit], *, query: str, datasets: Sequence[str], limit: int
    ) -> list[Hit]:
        """Paragraphs the evidence cites (an article of its own or another document) or names by title,
        best for the query first; none of the evidence itself; at most limit."""
        ...


class DocumentIndex(Protocol):
    """The write side of the knowledge base, used by ingestion and `kb docs`."""

    async def list_documents(self, dataset: str) -> list[DocumentInfo]: ...

    async def replace_document(
        self, dataset: str, document: DocumentInfo, chunks: Sequence[Chunk], *, embedding_model: str
    ) -> None:
        """Atomically (as seen by searches) replace a document's chunks with these."""
        ...

    async def delete_document(self, dataset: str, document_id: str) -> int:
        """Delete a document and its chunks; returns the number of chunks removed."""
        ...

    async def set_enabled(self, dataset: str, document_id: str, enabled: bool) -> None: ...


class ChatModel(Protocol):
    """A raw OpenAI-compatible chat model."""

    @property
    def name(self) -> str: ...

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float = 0.0,
        json_schema: dict[str, Any] | None = None,  # JSON: a JSON Schema sent as is to the model API
    ) -> Completion:
        """One whole completion. Raises ModelUnavailable / ModelTruncated / ModelOutputInvalid."""
        ...

    def stream(
        self, messages: Sequence[Message], *, max_tokens: int, temperature: float = 0.2
    ) -> AsyncIterator[str | Completion]:
        """Yields text deltas, then one final Completion (full text, finish_reason, usage)."""
        ...

    async def context_window(self) -> int | None:
        """The server's context window in tokens (prompt and reply together); None when unknown."""
        ...


class Engine(Protocol):
    """The model roles the pipeline needs. Implemented over a ChatModel, or extractively with no model."""

    @property
    def name(self) -> str:
        """Which engine answered (recorded on every record)."""
        ...

    async def rewrite(self, history: Sequence[Turn], question: str) -> tuple[str, Usage]:
        """A standalone question resolving pronouns and omitted subjects. Never answers."""
        ...

    async def assess(
        self, question: str, evidence: Sequence[Hit], searched: Sequence[str]
    ) -> tuple[Assessment, Usage]:
        """Whether the evidence covers every part of the question; raises ModelOutputInvalid if unparsable."""
        ...

    async def summarise(self, previous: str, turns: Sequence[Turn], *, max_tokens: int) -> tuple[str, Usage]:
        """Merge turns into the previous summary. Raises on empty or truncated output."""
        ...

    async def vote_multihop(self, question: str) -> tuple[bool, Usage]:
        """Yes/no: does the question need more than one retrieval hop."""
        ...

    def answer(self, request: AnswerRequest) -> AsyncIterator[str | Completion]:
        """Stream the grounded answer: text deltas, then one final Completion."""
        ...


class KeyTermCheck(Protocol):
    """The deterministic check a model's evidence verdict must pass (the extractive engine provides it)."""

    async def unsupported_parts(self, question: str, evidence: Sequence[Hit]) -> list[str]:
        """The question's parts whose key terms (entities, an asked quantity) the evidence lacks."""
        ...


class LeftOutParts(Protocol):
    """Quotes the evidence for the parts of a question a model's answer left out (the extractive engine
    provides it; docs/design.md#parts-the-answer-left-out)."""

    async def left_out(self, request: AnswerRequest, cited: Sequence[int]) -> tuple[SuppliedQuote, ...]:
        """For each part the evidence supports from paragraphs none of ``cited`` (1-based) names, its best
        sentences from those paragraphs; () when the answer cites what every supported part needs."""
        ...


class Reranker(Protocol):
    """Reorders accumulated candidates against the full question (runs once per question)."""

    async def rerank(self, question: str, hits: Sequence[Hit]) -> list[Hit]: ...


class ComplexityClassifier(Protocol):
    """The optional multi-hop classifier service."""

    async def predict(self, question: str, features: dict[str, float]) -> float:
        """Probability that the question is multi-hop. Raises ModelUnavailable when the service fails."""
        ...


class Conversations(Protocol):
    """The conversations role: finding conversations, their stored scope, and their answered turns."""

    async def find_conversation(self, key: ConversationKey) -> str | None:
        """The conversation's id if it exists, without creating it."""
        ...

    async def match_conversations(self, reference: str, *, limit: int = 10) -> list[str]:
        """Ids of conversations whose id or channel starts with reference, or whose thread is reference.

        Newest first, at most limit (a short form typed by a user; the caller decides on ambiguity).
        """
        ...

    async def read_scope(self, conversation_id: str) -> ConversationScope | None:
        """The datasets and modes stored at the conversation's first question; None before it."""
        ...

    async def recent_turns(
        self, conversation_id: str, *, before_id: int, after_id: int, limit: int
    ) -> list[Turn]:
        """The latest `limit` answered turns with after_id < id < before_id, oldest first (bounded query)."""
        ...

    async def turns_after(
        self, conversation_id: str, *, after_id: int, before_id: int, limit: int = 20
    ) -> list[Turn]:
        """Answered turns with after_id < id < before_id, oldest first, at most limit (a page)."""
        ...


class RecordReader(Protocol):
    """Reading records: what front ends may do with them (they never write one)."""

    async def get_record(self, record_id: int) -> Record | None: ...

    async def find_record(self, event_key: str) -> Record | None:
        """The record stored under an event key, if any (duplicate deliveries check it first)."""
        ...

    async def list_records(self, conversation_id: str, *, limit: int = 100) -> list[Record]: ...

    async def recent_questions(self, asked_by: str, *, limit: int = 5) -> list[Record]:
        """The latest `limit` records asked by this person (any status, any conversation), newest first."""
        ...

    async def pending_records(self) -> list[Record]:
        """Records left pending (e.g. by a crash)."""
        ...

    async def answered_since(self, since: float, *, limit: int = 10000) -> list[Record]:
        """Answered records of every conversation created at or after `since` (epoch seconds), newest
        first, at most `limit` (what `kb gaps` reads)."""
        ...


class Records(RecordReader, Protocol):
    """The records role: one question's record from opening to its end. Only core writes through it."""

    async def open_record(self, opening: RecordOpening) -> tuple[Record, bool]:
        """Store the conversation (when new), its scope (when it has none yet) and a pending record, in
        one transaction. With an event_key already used, returns (that record, False) and writes nothing.
        Raises InvalidInput for text that cannot be stored."""
        ...

    async def reopen_record(self, record_id: int, conversation_id: str) -> Record:
        """Ask again: the record goes back to pending, its old answer (with its details) appended to
        details.previous_answers, the only details it keeps. NotFound when the record does not exist or
        belongs to another conversation."""
        ...

    async def complete_record(
        self, record_id: int, *, answer: str, rewritten: str | None, details: RecordDetails
    ) -> Record:
        """Mark answered with everything at once (answer, rewritten question, details). The details' set
        fields replace the stored ones; fields at their defaults keep what is stored (feedback, earlier
        attempts)."""
        ...

    async def fail_record(
        self, record_id: int, *, status: RecordStatus, reason: str, details: RecordDetails = NO_DETAILS
    ) -> Record:
        """Mark failed or interrupted with the reason (details.failure), the details' set fields merged
        as complete_record merges them; never touches an answered record."""
        ...

    async def add_feedback(self, record_id: int, *, person: str, value: str, at: float) -> Record | None:
        """Keep a person's latest verdict on the record (one statement); None for an unknown record."""
        ...


class ContextSnapshots(Protocol):
    """The rolling-summary role: a conversation's compacted context and its watermark."""

    async def read_context(self, conversation_id: str) -> ContextSnapshot: ...

    async def save_context(
        self, conversation_id: str, *, expected_revision: int, snapshot: ContextSnapshot
    ) -> bool:
        """Write the snapshot only if the stored revision still equals expected_revision (one statement)."""
        ...


class ConversationStore(Conversations, Records, ContextSnapshots, Protocol):
    """All three roles, as one database implements them (the composition root hands out the roles)."""


class ConversationLock(Protocol):
    """One generation or compaction at a time per conversation, first come first served."""

    def hold(self, conversation_id: str) -> AbstractAsyncContextManager[None]: ...

    def waiting(self, conversation_id: str) -> int:
        """How many holders and waiters the conversation has right now (0 = free)."""
        ...


Emit = Callable[[Progress], Awaitable[None]]


class Retriever(Protocol):
    """Finds the evidence for one (rewritten) question: a single search, or the multi-hop loop."""

    async def retrieve(
        self,
        question: str,
        *,
        datasets: Sequence[str],
        search_mode: SearchMode,
        retrieval_mode: RetrievalMode,
        emit: Emit,
    ) -> RetrievalOutcome:
        """Emits Retrieving/Assessed progress; never raises for an empty result (returns no hits)."""
        ...


class ContextLoader(Protocol):
    """Prepares a conversation's history for one question (bounded turns, or summary + recent turns)."""

    async def load(
        self, conversation_id: str, *, before_id: int, on_compacting: Callable[[], Awaitable[None]]
    ) -> LoadedContext:
        """History strictly before before_id. Calls on_compacting once, only if a summary call happens."""
        ...


class SourceFetcher(Protocol):
    """Reads one synced source (a Slack channel, an export, a site)."""

    async def fetch(self, known: Mapping[str, str]) -> Fetched:
        """Every document new or changed since `known` (key -> version of the last sync), the keys still
        there and unchanged, and what was left out. Raises (never returns a partial list) when the source
        cannot be read whole: a partial list would read as deletions."""
        ...


class SourceMirror(Protocol):
    """The synced documents as files on this machine, one per key, which the ingest reads."""

    def path_of(self, key: str) -> Path: ...

    async def present(self, keys: Sequence[str]) -> set[str]:
        """The keys whose file is here (a fresh machine has none and fetches them again)."""
        ...

    async def write(self, documents: Sequence[SyncedDocument]) -> None: ...

    async def remove(self, keys: Sequence[str]) -> None: ...


class SourceRegistry(Protocol):
    """The registered sources, shared by every instance (it lives beside the conversations)."""

    async def add_source(self, spec: SourceSpec) -> None:
        """Raises InvalidInput when a source of that name exists."""
        ...

    async def get_source(self, name: str) -> SourceState | None: ...

    async def list_sources(self) -> list[SourceState]: ...

    async def remove_source(self, name: str) -> bool: ...

    async def claim_sync(self, name: str, owner: str, *, now: float, lease: float) -> bool:
        """Take the source's sync for `lease` seconds unless another owner holds an unexpired claim."""
        ...

    async def finish_sync(
        self, name: str, owner: str, report: SyncReport, versions: Mapping[str, str] | None
    ) -> None:
        """Keep the report (and the new versions, None: unchanged) and release the claim."""
        ...
