"""A scripted stand-in for core's Pipeline with the same interface and event contract (ask/compact/interrupt)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from core.commands import AskAgain, GiveFeedback, Question
from core.conversation.locks import LocalConversationLock
from core.conversation.orphans import OrphanSweeper
from core.events import (
    Accepted,
    AnswerDelta,
    Assessed,
    Compacting,
    ContextLoading,
    Done,
    Failed,
    Generating,
    Notice,
    Progress,
    Queued,
    Retrieving,
)
from core.models import CompactionReport, ContextStats, RecordOpening, RecordStatus
from core.record import CitedSource, Record, RecordDetails
from core.text import detect_language
from core.trace import RetrievalTrace, RoundStep, RouteDecision, StopReason
from tests.fakes import InMemoryConversationStore


@dataclass
class Script:
    """How the fake answers one question."""

    answer: str = "The answer is in the guide [1]."
    rounds: list[tuple[str, bool, str]] = field(default_factory=lambda: [("", True, "")])
    notice: str | None = None
    fail: tuple[str, str] | None = None
    compacting: bool = False
    compacted_rounds: int = 0
    recent_rounds: int = 0
    stop_reason: StopReason = StopReason.SUFFICIENT
    gate: asyncio.Event | None = None
    step_delay: float = 0.0
    citations: tuple[CitedSource, ...] = (
        CitedSource(1, "Guide", "Setup", "https://docs.example.com/guide", "p1"),
    )


class FakePipeline:
    """Stores records like the real pipeline, takes the conversation lock, and emits the same events."""

    def __init__(
        self,
        store: InMemoryConversationStore | None = None,
        *,
        step_delay: float = 0.0,
        orphan_grace: float = 0.5,
    ) -> None:
        self.store = store or InMemoryConversationStore()
        self.lock = LocalConversationLock()
        self.sweeper = OrphanSweeper(self.store, self.lock, grace=orphan_grace)
        self.scripts: dict[str, Script] = {}
        self.default = Script(step_delay=step_delay)
        self.asked: list[Question] = []
        self.scopes: dict[int, tuple[str, ...]] = {}
        self.answered_order: list[str] = []
        self.compactions: list[str] = []
        self.killed = False  # like kill -9: an answer cut short writes nothing more

    def script(self, question: str, **fields: Any) -> Script:
        """Script the answer to a question (matched on the plain text the bot passes)."""
        self.scripts[question] = Script(**{"step_delay": self.default.step_delay, **fields})
        return self.scripts[question]

    def _details(self, question: Record, script: Script) -> RecordDetails:
        rounds = tuple(
            RoundStep(
                round=i,
                queries=(query or question.question,),
                new_paragraph_ids=(f"p{i}",),
                total_evidence=i,
                sufficient=ok,
                missing=missing,
            )
            for i, (query, ok, missing) in enumerate(script.rounds, start=1)
        )
        return RecordDetails(
            lang=detect_language(question.question),
            engine="fake",
            citations=script.citations,
            notice=script.notice,
            context=ContextStats(
                enabled=True,
                compacted=script.compacting,
                revision=1 if script.compacted_rounds else 0,
                compacted_rounds=script.compacted_rounds,
                recent_rounds=script.recent_rounds,
                token_budget=6000,
                threshold_exceeded=script.compacting,
                estimated_tokens=900,
            ),
            trace=RetrievalTrace(
                rewritten=question.question,
                mode="multi" if len(rounds) > 1 else "single",
                escalated=False,
                complexity=RouteDecision(decision="single", source="rules", rule_score=0.2, reason="short"),
                rounds=rounds,
                stop_reason=script.stop_reason,
                sufficient=script.notice is None,
                missing=script.rounds[-1][2] if script.notice and script.rounds else "",
                run_time=0.01,
                datasets=self.scopes.get(question.id, ()),
            ),
        )

    async def ask(self, command: Question) -> AsyncIterator[Progress]:
        self.asked.append(command)
        if isinstance(command, AskAgain):
            record = await self.store.reopen_record(command.record_id, command.conversation.as_id())
            created = True
        else:
            if not command.text.strip():
                yield Failed("invalid_input", "The question is empty.")
                return
            record, created = await self.store.open_record(
                RecordOpening(
                    command.conversation,
                    command.text,
                    command.scope,
                    event_key=command.event_key,
                    asked_by=command.asked_by,
                    reply_to=command.reply_to,
                )
            )
        if not created:
            yield Failed("duplicate", "This message was already answered.", record)
            return
        self.scopes[record.id] = command.scope.datasets
        script = self.scripts.get(record.question, self.default)
        conversation_id = record.conversation_id
        yield Accepted(record)
        try:
            async for event in self._answer(record, script, conversation_id):
                yield event
        except (asyncio.CancelledError, GeneratorExit):  # closed before its end, as the pipeline marks it
            if not self.killed and self.store.records[record.id].status == RecordStatus.PENDING:
                await self.store.fail_record(record.id, status=RecordStatus.INTERRUPTED, reason="interrupted")
            raise

    async def _answer(self, record: Record, script: Script, conversation_id: str) -> AsyncIterator[Progress]:
        waiting = self.lock.waiting(conversation_id)
        if waiting:
            yield Queued(position=waiting)
        async with self.lock.hold(conversation_id):
            yield ContextLoading()
            if script.compacting:
                yield Compacting()
            for index, (query, ok, missing) in enumerate(script.rounds, start=1):
                yield Retrieving(round=index, query=query or record.question)
                await asyncio.sleep(script.step_delay)
                yield Assessed(round=index, sufficient=ok, missing=missing)
            if script.fail is not None:
                failed = await self.store.fail_record(
                    record.id,
                    status=RecordStatus.FAILED,
                    reason=script.fail[0],
                    details=RecordDetails(lang=detect_language(record.question), user_message=script.fail[1]),
                )
                yield Failed(script.fail[0], script.fail[1], failed)
                return
            yield Generating(rounds=len(script.rounds))
            if script.gate is not None:
                await script.gate.wait()
            for word in script.answer.split(" "):
                yield AnswerDelta(word + " ")
            await asyncio.sleep(script.step_delay)
            answer = script.answer + (f"\n\n{script.notice}" if script.notice else "")
            if script.notice:
                yield Notice(script.notice)
            done = await self.store.complete_record(
                record.id, answer=answer, rewritten=record.question, details=self._details(record, script)
            )
            self.answered_order.append(record.question)
            yield Done(done)

    async def compact(self, conversation_id: str) -> CompactionReport:
        self.compactions.append(conversation_id)
        answered = [
            r for r in await self.store.list_records(conversation_id) if r.status == RecordStatus.ANSWERED
        ]
        if not answered:
            return CompactionReport(False, 0, 0, 0, "no_history")
        if len(answered) < 2:
            return CompactionReport(False, 0, 0, 0, "under_budget")
        return CompactionReport(
            True, len(answered) - 1, 1, answered[-2].id, "token_budget_exceeded", summary_calls=1
        )

    async def feedback(self, command: GiveFeedback) -> Record | None:
        return await self.store.add_feedback(
            command.record_id, person=command.person, value=command.value, at=time.time()
        )

    async def sweep_orphans(self) -> list[Record]:
        return await self.sweeper.sweep()

    async def interrupt_pending(self) -> list[Record]:
        interrupted = []
        for record in await self.store.pending_records():
            interrupted.append(
                await self.store.fail_record(record.id, status=RecordStatus.INTERRUPTED, reason="interrupted")
            )
        return interrupted
