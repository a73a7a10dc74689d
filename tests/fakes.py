"""In-memory fakes of core's ports, with enqueue()/history in the style of simonw/llm's MockModel."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from typing import Any

from adapters.slack.delivery.ledger import Delivery, DeliveryState, EventClaim, Tracked
from adapters.store.errors import record_not_found, record_not_pending, record_to_answer_not_found
from core.answering.answer import most_cited_first
from core.errors import (
    InvalidInput,
    ModelOutputInvalid,
    ModelTruncated,
    ModelUnavailable,
)
from core.messages import phrase
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
    Message,
    RecordOpening,
    RecordStatus,
    SearchRequest,
    Turn,
    Usage,
)
from core.record import NO_DETAILS, ArchivedAttempt, Record, RecordDetails, Verdict
from core.text import normalize_query
from tests.stored import stored_question


class FakeKnowledgeBase:
    """Paragraphs in memory; a query matches a paragraph by shared characters/words. Records every search."""

    def __init__(self, hits: Sequence[Hit] = ()) -> None:
        self.paragraphs: list[Hit] = list(hits)
        self.scripted: dict[str, list[Hit]] = {}
        self.requests: list[SearchRequest] = []

    def add(
        self, id: str, content: str, *, document: str = "doc", dataset: str = "ds", heading: str = ""
    ) -> Hit:
        hit = Hit(
            id=id,
            content=content,
            score=0.0,
            dataset=dataset,
            document_id=document,
            document_name=document,
            heading=heading,
        )
        self.paragraphs.append(hit)
        return hit

    def script(self, query: str, hits: Sequence[Hit]) -> None:
        """Make a query (compared after normalisation) return exactly these hits."""
        self.scripted[normalize_query(query)] = list(hits)

    @property
    def queries(self) -> list[str]:
        return [request.query for request in self.requests]

    async def search(self, request: SearchRequest) -> list[Hit]:
        if not request.datasets:
            return []
        if not request.query.strip():
            raise InvalidInput(phrase("error.empty_query"))
        self.requests.append(request)
        key = normalize_query(request.query)
        if key in self.scripted:
            return self.scripted[key][: request.limit]
        query_chars = set(key)
        scored = []
        for hit in self.paragraphs:
            if hit.dataset not in request.datasets:
                continue
            overlap = len(query_chars & set(normalize_query(hit.content + hit.document_name)))
            score = overlap / max(1, len(query_chars))
            if score > 0 and score >= request.threshold:
                scored.append(replace(hit, score=round(score, 4)))
        scored.sort(key=lambda h: (-h.score, h.id))
        return scored[: request.limit]


class FakeEngine:
    """Scripted model roles. Unscripted calls fall back to simple deterministic behaviour."""

    name = "fake"

    def __init__(self) -> None:
        self.rewrites: deque[str | Exception] = deque()
        self.assessments: deque[Assessment | Exception] = deque()
        self.summaries: deque[str | Exception] = deque()
        self.votes: deque[bool | Exception] = deque()
        self.answers: deque[list[str] | Exception] = deque()
        self.history: list[tuple[str, Any]] = []
        self.answer_delay = 0.0

    def calls(self, role: str) -> list[Any]:
        return [args for name, args in self.history if name == role]

    @staticmethod
    def _next(queue: deque[Any]) -> Any:
        item = queue.popleft()
        if isinstance(item, Exception):
            raise item
        return item

    async def rewrite(self, history: Sequence[Turn], question: str) -> tuple[str, Usage]:
        self.history.append(("rewrite", (list(history), question)))
        return (self._next(self.rewrites) if self.rewrites else question), Usage(10, 5)

    async def assess(
        self, question: str, evidence: Sequence[Hit], searched: Sequence[str]
    ) -> tuple[Assessment, Usage]:
        self.history.append(("assess", (question, list(evidence), list(searched))))
        if self.assessments:
            return self._next(self.assessments), Usage(20, 10)
        return Assessment(sufficient=bool(evidence)), Usage(20, 10)

    async def summarise(self, previous: str, turns: Sequence[Turn], *, max_tokens: int) -> tuple[str, Usage]:
        self.history.append(("summarise", (previous, list(turns), max_tokens)))
        if self.summaries:
            return self._next(self.summaries), Usage(30, 15)
        merged = " | ".join(f"Q:{t.question} A:{t.answer[:40]}" for t in turns)
        return (previous + " || " + merged).strip(" |"), Usage(30, 15)

    async def vote_multihop(self, question: str) -> tuple[bool, Usage]:
        self.history.append(("vote", question))
        return (self._next(self.votes) if self.votes else False), Usage(5, 1)

    async def answer(self, request: AnswerRequest) -> AsyncIterator[str | Completion]:
        self.history.append(("answer", request))
        pieces = (
            self._next(self.answers)
            if self.answers
            else [f"Answer to {request.question} [1]" if request.evidence else "No evidence."]
        )
        for piece in pieces:
            if self.answer_delay:
                await asyncio.sleep(self.answer_delay)
            yield piece
        yield Completion(text="".join(pieces), finish_reason="stop", usage=Usage(100, len(pieces)))


class FakeChatModel:
    """A raw ChatModel with enqueued completions; records (messages, kwargs) of every call."""

    def __init__(self, name: str = "fake-model", *, window: int | None = None) -> None:
        self.name = name
        self.window = window
        self.queue: deque[Completion | Exception] = deque()
        self.history: list[tuple[list[Message], dict[str, Any]]] = []

    async def context_window(self) -> int | None:
        return self.window

    def enqueue(self, text: str, finish_reason: str = "stop") -> None:
        self.queue.append(
            Completion(text=text, finish_reason=finish_reason, usage=Usage(10, 5), model=self.name)
        )

    def fail(self, error: Exception) -> None:
        self.queue.append(error)

    def _take(self) -> Completion:
        if not self.queue:
            raise ModelUnavailable("nothing enqueued")
        item = self.queue.popleft()
        if isinstance(item, Exception):
            raise item
        return item

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float = 0.0,
        json_schema: dict[str, Any] | None = None,
    ) -> Completion:
        self.history.append(
            (
                list(messages),
                {
                    "max_tokens": max_tokens,
                    "temperature": temperature,
                    "json_schema": json_schema,
                    "stream": False,
                },
            )
        )
        completion = self._take()
        if completion.finish_reason == "length":
            raise ModelTruncated("length")
        if not completion.text.strip():
            raise ModelOutputInvalid("empty")
        return completion

    async def stream(
        self, messages: Sequence[Message], *, max_tokens: int, temperature: float = 0.2
    ) -> AsyncIterator[str | Completion]:
        self.history.append(
            (list(messages), {"max_tokens": max_tokens, "temperature": temperature, "stream": True})
        )
        completion = self._take()
        words = completion.text.split(" ")
        for index, word in enumerate(words):
            yield word if index == 0 else " " + word
        yield completion


class InMemoryConversationStore:
    """Core's store roles in memory (conversations, records, context snapshots), as the SQL stores behave."""

    def __init__(self) -> None:
        self.conversations: dict[str, ConversationKey] = {}
        self.records: dict[int, Record] = {}
        self.contexts: dict[str, ContextSnapshot] = {}
        self.scopes: dict[str, ConversationScope] = {}
        self.deliveries: dict[int, Delivery] = {}  # the delivery ledger's rows (InMemoryDeliveryLedger)
        self._next_id = 1
        self.turn_queries: list[tuple[str, int]] = []  # (method, limit) for bounded-read assertions

    async def find_conversation(self, key: ConversationKey) -> str | None:
        return key.as_id() if key.as_id() in self.conversations else None

    async def match_conversations(self, reference: str, *, limit: int = 10) -> list[str]:
        if not reference or limit <= 0:
            return []
        found = [
            conversation_id
            for conversation_id, key in self.conversations.items()
            if conversation_id.startswith(reference)
            or key.channel_id.startswith(reference)
            or key.thread_ts == reference
        ]
        return list(reversed(found))[:limit]  # newest first (dicts keep insertion order)

    async def read_scope(self, conversation_id: str) -> ConversationScope | None:
        return self.scopes.get(conversation_id)

    async def open_record(self, opening: RecordOpening) -> tuple[Record, bool]:
        if opening.event_key is not None:
            for record in self.records.values():
                if record.event_key == opening.event_key:
                    return record, False
        conversation_id = opening.conversation.as_id()
        self.conversations.setdefault(conversation_id, opening.conversation)
        self.scopes.setdefault(conversation_id, opening.scope)
        now = time.time()
        record = Record(
            id=self._next_id,
            conversation_id=conversation_id,
            question=opening.question,
            status=RecordStatus.PENDING,
            event_key=opening.event_key,
            created_at=now,
            updated_at=now,
            asked_by=opening.asked_by,
            reply_to=opening.reply_to,
        )
        self.records[record.id] = record
        if opening.reply_to is not None:
            self.deliveries[record.id] = Delivery(due=now)
        self._next_id += 1
        return record, True

    async def recent_questions(self, asked_by: str, *, limit: int = 5) -> list[Record]:
        if limit <= 0 or not asked_by:
            return []
        mine = [r for r in self.records.values() if r.asked_by == asked_by]
        return sorted(mine, key=lambda r: r.id, reverse=True)[:limit]

    async def get_record(self, record_id: int) -> Record | None:
        return self.records.get(record_id)

    async def find_record(self, event_key: str) -> Record | None:
        return next((r for r in self.records.values() if r.event_key == event_key), None)

    def _answered(self, conversation_id: str, after_id: int, before_id: int) -> list[Turn]:
        return [
            Turn(
                r.id,
                r.question,
                r.answer or "",
                most_cited_first(r.answer or "", [(c.n, c.document) for c in r.details.citations]),
            )
            for r in sorted(self.records.values(), key=lambda r: r.id)
            if r.conversation_id == conversation_id
            and r.status == RecordStatus.ANSWERED
            and r.answer is not None
            and after_id < r.id < before_id
        ]

    async def recent_turns(
        self, conversation_id: str, *, before_id: int, after_id: int, limit: int
    ) -> list[Turn]:
        self.turn_queries.append(("recent_turns", limit))
        if limit <= 0:
            return []
        return self._answered(conversation_id, after_id, before_id)[-limit:]

    async def turns_after(
        self, conversation_id: str, *, after_id: int, before_id: int, limit: int = 20
    ) -> list[Turn]:
        self.turn_queries.append(("turns_after", limit))
        return self._answered(conversation_id, after_id, before_id)[:limit]

    def _record(self, record_id: int) -> Record:
        if record_id not in self.records:
            raise record_not_found(record_id)
        return self.records[record_id]

    async def complete_record(
        self, record_id: int, *, answer: str, rewritten: str | None, details: RecordDetails
    ) -> Record:
        current = self._record(record_id)
        if current.status != RecordStatus.PENDING:
            raise record_not_pending(record_id, current.status)
        record = replace(
            current,
            answer=answer,
            rewritten=rewritten,
            details=_merged(current.details, details),
            status=RecordStatus.ANSWERED,
            updated_at=time.time(),
        )
        self.records[record_id] = record
        return record

    async def fail_record(
        self, record_id: int, *, status: RecordStatus, reason: str, details: RecordDetails = NO_DETAILS
    ) -> Record:
        if status not in (RecordStatus.FAILED, RecordStatus.INTERRUPTED):
            raise InvalidInput(phrase("error.bad_failure_status", status=status))
        record = self._record(record_id)
        if record.status == RecordStatus.ANSWERED:
            return record
        merged = _merged(record.details, replace(details, failure=reason))
        record = replace(record, status=status, details=merged, updated_at=time.time())
        self.records[record_id] = record
        return record

    async def reopen_record(self, record_id: int, conversation_id: str) -> Record:
        record = self.records.get(record_id)
        if record is None or record.conversation_id != conversation_id:
            raise record_to_answer_not_found(record_id)
        if record.status == RecordStatus.PENDING:
            return record
        attempt = ArchivedAttempt(
            status=record.status,
            answer=record.answer,
            rewritten=record.rewritten,
            updated_at=record.updated_at,
            details=replace(record.details, previous_answers=()),
        )
        record = replace(
            record,
            status=RecordStatus.PENDING,
            answer=None,
            rewritten=None,
            details=RecordDetails(previous_answers=(*record.details.previous_answers, attempt)),
            updated_at=time.time(),
        )
        self.records[record_id] = record
        return record

    async def add_feedback(self, record_id: int, *, person: str, value: str, at: float) -> Record | None:
        record = self.records.get(record_id)
        if record is None:
            return None
        others = [item for item in record.details.feedback if item.person != person]
        feedback = tuple(sorted([*others, Verdict(person, value, at)], key=lambda item: item.person))
        self.records[record_id] = replace(record, details=replace(record.details, feedback=feedback))
        return self.records[record_id]

    async def list_records(self, conversation_id: str, *, limit: int = 100) -> list[Record]:
        rows = [
            r
            for r in sorted(self.records.values(), key=lambda r: r.id)
            if r.conversation_id == conversation_id
        ]
        return rows[-limit:]

    async def pending_records(self) -> list[Record]:
        return [
            r for r in sorted(self.records.values(), key=lambda r: r.id) if r.status == RecordStatus.PENDING
        ]

    async def answered_since(self, since: float, *, limit: int = 10000) -> list[Record]:
        newest_first = sorted(self.records.values(), key=lambda r: -r.id)
        chosen = [r for r in newest_first if r.status == RecordStatus.ANSWERED and r.created_at >= since]
        return chosen[: max(0, limit)]

    async def read_context(self, conversation_id: str) -> ContextSnapshot:
        return self.contexts.get(conversation_id, ContextSnapshot())

    async def save_context(
        self, conversation_id: str, *, expected_revision: int, snapshot: ContextSnapshot
    ) -> bool:
        if self.contexts.get(conversation_id, ContextSnapshot()).revision != expected_revision:
            return False
        self.contexts[conversation_id] = replace(
            snapshot, revision=expected_revision + 1, updated_at=time.time()
        )
        return True

    async def answered(self, conversation_id: str, question: str, answer: str) -> Record:
        """Test helper: store a question and its answer as one completed turn (in a stored conversation)."""
        record = await stored_question(self, conversation_id, question)
        return await self.complete_record(record.id, answer=answer, rewritten=None, details=NO_DETAILS)


def _merged(stored: RecordDetails, patch: RecordDetails) -> RecordDetails:
    """What the SQL stores keep after writing patch over stored: its JSON's top-level keys replace theirs."""
    return RecordDetails.from_json({**stored.to_json(), **patch.to_json()})


class InMemoryDeliveryLedger:
    """The Slack delivery ledger in memory, over an InMemoryConversationStore's records."""

    def __init__(self, store: InMemoryConversationStore) -> None:
        self.store = store
        self.events: dict[str, EventClaim] = {}

    async def read_delivery(self, record_id: int) -> Delivery | None:
        self.store._record(record_id)
        return self.store.deliveries.get(record_id)

    async def save_delivery(self, record_id: int, delivery: Delivery) -> Delivery:
        self.store._record(record_id)
        self.store.deliveries[record_id] = replace(delivery, reply_ref=delivery.reply_ref or None)
        return self.store.deliveries[record_id]

    async def take_due_deliveries(
        self, now: float, *, lease: float, settle: float, limit: int = 20, record_id: int | None = None
    ) -> list[Tracked]:
        records = self.store.records
        due = [
            (delivery.due, rid)
            for rid, delivery in self.store.deliveries.items()
            if (record_id is None or rid == record_id)
            and delivery.state in (DeliveryState.PENDING, DeliveryState.PLACEHOLDER)
            and records[rid].status != RecordStatus.PENDING
            and delivery.due <= now
            and records[rid].updated_at <= now - settle
        ]
        taken = sorted(due)[: max(0, limit)]
        for _, rid in taken:
            self.store.deliveries[rid] = replace(self.store.deliveries[rid], due=now + lease)
        return [Tracked(records[rid], self.store.deliveries[rid]) for rid in sorted(r for _, r in taken)]

    async def claim_event(self, key: str, *, record_id: int | None = None) -> bool:
        if key in self.events:
            return False
        self.events[key] = EventClaim(key=key, record_id=record_id, created_at=time.time())
        return True

    async def find_event(self, key: str) -> EventClaim | None:
        return self.events.get(key)

    async def prune_events(self, before: float) -> int:
        old = [key for key, claim in self.events.items() if claim.created_at < before]
        for key in old:
            del self.events[key]
        return len(old)


class FakeDocumentIndex:
    """DocumentIndex in memory (documents and their chunks)."""

    def __init__(self) -> None:
        self.documents: dict[tuple[str, str], DocumentInfo] = {}
        self.chunks: dict[tuple[str, str], list[Chunk]] = {}
        self.writes = 0

    async def list_documents(self, dataset: str) -> list[DocumentInfo]:
        return [d for (ds, _), d in sorted(self.documents.items()) if ds == dataset]

    async def replace_document(
        self, dataset: str, document: DocumentInfo, chunks: Sequence[Chunk], *, embedding_model: str
    ) -> None:
        self.writes += 1
        self.documents[(dataset, document.document_id)] = document
        self.chunks[(dataset, document.document_id)] = list(chunks)

    async def delete_document(self, dataset: str, document_id: str) -> int:
        self.writes += 1
        self.documents.pop((dataset, document_id), None)
        return len(self.chunks.pop((dataset, document_id), []))

    async def set_enabled(self, dataset: str, document_id: str, enabled: bool) -> None:
        self.documents[(dataset, document_id)] = replace(
            self.documents[(dataset, document_id)], enabled=enabled
        )
