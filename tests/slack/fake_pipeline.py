"""A scripted stand-in for core's Pipeline with the same interface and event contract (ask/compact/interrupt)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

from core.conversation.locks import LocalConversationLock
from core.events import (
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
from core.models import CompactionReport, Question, Record, RecordStatus
from core.text import detect_language
from core.trace import StopReason, stop_reason_label
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
    citations: list[dict[str, Any]] = field(
        default_factory=lambda: [
            {
                "n": 1,
                "document": "Guide",
                "heading": "Setup",
                "source": "https://docs.example.com/guide",
                "paragraph_id": "p1",
            }
        ]
    )


class FakePipeline:
    """Stores records like the real pipeline, takes the conversation lock, and emits the same events."""

    def __init__(self, store: InMemoryConversationStore | None = None, *, step_delay: float = 0.0) -> None:
        self.store = store or InMemoryConversationStore()
        self.lock = LocalConversationLock()
        self.scripts: dict[str, Script] = {}
        self.default = Script(step_delay=step_delay)
        self.asked: list[Question] = []
        self.answered_order: list[str] = []
        self.compactions: list[str] = []

    def script(self, question: str, **fields: Any) -> Script:
        """Script the answer to a question (matched on the plain text the bot passes)."""
        self.scripts[question] = Script(**{"step_delay": self.default.step_delay, **fields})
        return self.scripts[question]

    def _details(self, question: Question, script: Script) -> dict[str, Any]:
        lang = detect_language(question.text)
        rounds = [
            {
                "round": i,
                "queries": [query or question.text],
                "new_paragraph_ids": [f"p{i}"],
                "total_evidence": i,
                "sufficient": ok,
                "missing": missing,
                "next_queries": [],
            }
            for i, (query, ok, missing) in enumerate(script.rounds, start=1)
        ]
        return {
            "lang": lang,
            "engine": "fake",
            "citations": script.citations,
            "notice": script.notice,
            "context": {
                "enabled": True,
                "compacted": script.compacting,
                "revision": 1 if script.compacted_rounds else 0,
                "compacted_rounds": script.compacted_rounds,
                "recent_rounds": script.recent_rounds,
                "token_budget": 6000,
                "threshold_exceeded": script.compacting,
                "estimated_tokens": 900,
            },
            "trace": {
                "rewritten": question.text,
                "mode": "multi" if len(rounds) > 1 else "single",
                "escalated": False,
                "complexity": {"source": "rules", "rule_score": 0.2, "decision": "single", "reason": "short"},
                "rounds": rounds,
                "stop_reason": script.stop_reason.value,
                "stop_label_zh": stop_reason_label(script.stop_reason, "zh"),
                "stop_label_en": stop_reason_label(script.stop_reason, "en"),
                "sufficient": script.notice is None,
                "missing": "",
                "run_time": 0.01,
            },
            "datasets": list(question.datasets),
        }

    async def ask(self, question: Question) -> AsyncIterator[Progress]:
        self.asked.append(question)
        script = self.scripts.get(question.text, self.default)
        if not question.text.strip():
            failed = None
            if question.record_id is not None:
                failed = await self.store.fail_record(
                    question.record_id, status=RecordStatus.FAILED, reason="invalid_input: empty"
                )
            yield Failed("invalid_input", "The question is empty.", failed)
            return
        conversation_id = await self.store.ensure_conversation(question.conversation)
        if question.record_id is not None or question.re_chat_record_id is not None:
            stored = await self.store.get_record(question.record_id or question.re_chat_record_id or 0)
            assert stored is not None and stored.conversation_id == conversation_id
            if question.re_chat_record_id is not None:
                stored = await self.store.reset_record(stored.id)
            record, created = stored, stored.status == RecordStatus.PENDING
        else:
            record, created = await self.store.add_question(
                conversation_id, question.text, event_key=question.event_key, reply_ref=question.reply_ref
            )
        if not created:
            yield Failed("duplicate", "This message was already answered.", record)
            return
        waiting = self.lock.waiting(conversation_id)
        if waiting:
            yield Queued(position=waiting)
        async with self.lock.hold(conversation_id):
            yield ContextLoading()
            if script.compacting:
                yield Compacting()
            for index, (query, ok, missing) in enumerate(script.rounds, start=1):
                yield Retrieving(round=index, query=query or question.text)
                await asyncio.sleep(script.step_delay)
                yield Assessed(round=index, sufficient=ok, missing=missing)
            if script.fail is not None:
                failed = await self.store.fail_record(
                    record.id,
                    status=RecordStatus.FAILED,
                    reason=script.fail[0],
                    details={"lang": detect_language(question.text)},
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
                record.id, answer=answer, rewritten=question.text, details=self._details(question, script)
            )
            self.answered_order.append(question.text)
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

    async def interrupt_pending(self) -> list[Record]:
        interrupted = []
        for record in await self.store.pending_records():
            interrupted.append(
                await self.store.fail_record(record.id, status=RecordStatus.INTERRUPTED, reason="interrupted")
            )
        return interrupted
