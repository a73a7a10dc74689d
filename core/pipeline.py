"""One question, end to end: validate, store, lock, load context, rewrite, retrieve, generate, persist, emit."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace

from core import messages
from core.answering import log_context
from core.answering.answer import citations, cited_numbers, uncertainty_notice
from core.answering.attribution import attribute
from core.answering.claims import check_claims
from core.answering.generation import AnswerWriter
from core.answering.left_out import left_out_text
from core.answering.run_ledger import RunLedger
from core.commands import Ask, AskAgain, GiveFeedback, Question
from core.conversation.orphans import DEFAULT_GRACE, OrphanSweeper
from core.errors import InvalidInput, KbError, ModelError
from core.events import (
    Accepted,
    AnswerDelta,
    Compacting,
    ContextLoading,
    Done,
    Failed,
    Generating,
    Notice,
    Progress,
    Queued,
)
from core.models import (
    AnswerRequest,
    ClaimPolicy,
    CompactionReport,
    ConversationScope,
    LoadedContext,
    RecordOpening,
    RecordStatus,
    RetrievalMode,
    SearchMode,
    Turn,
    Usage,
)
from core.ports import (
    ContextLoader,
    ConversationLock,
    Engine,
    LeftOutParts,
    Records,
    Retriever,
    SentenceMeaning,
)
from core.record import Attribution, Record, SuppliedQuote, UsageTally
from core.retrieval.topic import topic_query
from core.retrieval.versions import version_note
from core.text import detect_language, normalize_query
from core.validation import validate_question

log = logging.getLogger(__name__)

Compactor = Callable[[str], Awaitable[CompactionReport]]


class NoKnowledgeBase(KbError):
    """The conversation's channel has no dataset configured."""

    code = "no_knowledge_base"

    def __init__(self) -> None:
        super().__init__(messages.phrase("error.no_knowledge_base"))


@dataclass(frozen=True, slots=True)
class PipelineLimits:
    """Pipeline-wide settings."""

    question_max_tokens: int = 4000
    search_mode: SearchMode = "blend"
    retrieval_mode: RetrievalMode = "auto"
    answer_fallback: bool = True
    unsupported_claims: ClaimPolicy = "mark"


class Pipeline:
    """The single use case: answer a question in a conversation, streaming typed progress events.

    The pipeline is the only writer of records: front ends hand it commands (core.commands) and read
    records through `records` (a RecordReader), never writing one themselves.
    """

    def __init__(
        self,
        *,
        records: Records,
        lock: ConversationLock,
        context_loader: ContextLoader,
        retriever: Retriever,
        engine: Engine,
        fallback_engine: Engine | None = None,
        compactor: Compactor | None = None,
        limits: PipelineLimits | None = None,
        orphan_grace: float = DEFAULT_GRACE,
        meaning: SentenceMeaning | None = None,
        left_out: LeftOutParts | None = None,
    ) -> None:
        self._records = records
        self.lock = lock
        self._context = context_loader
        self._retriever = retriever
        self._engine = engine
        self._fallback = fallback_engine
        self._compactor = compactor
        self._meaning = meaning  # ties a model's sentence that rephrases its source to that source
        self._left_out = left_out  # quotes the parts a model's answer left out
        self._limits = limits or PipelineLimits()
        self._writer = AnswerWriter(
            engine, fallback=fallback_engine, allow_fallback=self._limits.answer_fallback
        )
        self._sweeper = OrphanSweeper(records, lock, grace=orphan_grace)

    async def ask(self, command: Question) -> AsyncIterator[Progress]:
        """Accepted (once the record is stored), then progress, ending with exactly one Done or Failed.

        Closing the stream early interrupts the question: its record is marked interrupted.
        """
        queue: asyncio.Queue[Progress] = asyncio.Queue()
        task = asyncio.create_task(self._run(command, queue.put))
        try:
            while True:
                event = await queue.get()
                yield event
                if isinstance(event, Done | Failed):
                    break
            await task
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    async def answer(self, command: Question) -> Record | Failed:
        """Convenience: run ask() to the end and return the final record (or the failure)."""
        async for event in self.ask(command):
            if isinstance(event, Done):
                return event.record
            if isinstance(event, Failed):
                return event
        raise RuntimeError("ask() ended without a final event")  # pragma: no cover

    async def feedback(self, command: GiveFeedback) -> Record | None:
        """Keep a person's 👍/👎 on an answer; None when the record does not exist."""
        if command.value not in ("up", "down"):
            raise InvalidInput(messages.phrase("error.bad_feedback"))
        return await self._records.add_feedback(
            command.record_id, person=command.person, value=command.value, at=time.time()
        )

    async def compact(self, conversation_id: str) -> CompactionReport:
        """Manual compaction with the same token threshold as automatic compaction."""
        if self._compactor is None:
            return CompactionReport(False, 0, 0, 0, "compaction not configured")
        return await self._compactor(conversation_id)

    async def interrupt_pending(self, *, wait: float = 0.5) -> list[Record]:
        """Mark records left pending by a crash or shutdown as interrupted; returns them.

        A record counts as orphaned only when its conversation's lock can be taken within `wait` seconds:
        another instance sharing the database holds that lock while it is still answering, so its work is
        left alone.
        """
        interrupted = []
        for record in await self._records.pending_records():
            try:
                async with asyncio.timeout(wait), self.lock.hold(record.conversation_id):
                    interrupted.append(
                        await self._records.fail_record(
                            record.id,
                            status=RecordStatus.INTERRUPTED,
                            reason="interrupted: the bot stopped while answering",
                        )
                    )
            except TimeoutError:
                log.info("record %s is still being answered elsewhere; leaving it", record.id)
        return interrupted

    async def sweep_orphans(self) -> list[Record]:
        """Interrupt questions a stopped instance left pending for longer than the grace period."""
        return await self._sweeper.sweep()

    async def _run(self, command: Question, emit: Callable[[Progress], Awaitable[None]]) -> None:
        run = RunLedger(lang=detect_language(command.text if isinstance(command, Ask) else ""))
        opened = await self._open(command, run)
        if isinstance(opened, Failed):
            await emit(opened)
            return
        with log_context.bound(record_id=opened.id, conversation_id=opened.conversation_id):
            await self._run_opened(opened, command, run, emit)

    async def _run_opened(
        self, record: Record, command: Question, run: RunLedger, emit: Callable[[Progress], Awaitable[None]]
    ) -> None:
        run.lang = detect_language(record.question)
        await emit(Accepted(record=record))
        try:
            position = self.lock.waiting(record.conversation_id)
            if position:
                await emit(Queued(position=position))
            async with self.lock.hold(record.conversation_id):
                final = await self._answer(record, command.scope, run, emit)
        except asyncio.CancelledError:
            await asyncio.shield(self._fail(record, RecordStatus.INTERRUPTED, "interrupted", run))
            raise
        except KbError as exc:
            message = exc.message(run.lang)
            failed = await self._fail(record, RecordStatus.FAILED, f"{exc.code}: {exc}", run, message)
            await emit(Failed(code=exc.code, message=message, record=failed))
            return
        except Exception as exc:
            log.exception("question %s failed", record.id)
            message = messages.text("error.internal", run.lang)
            failed = await self._fail(record, RecordStatus.FAILED, f"internal: {exc!r}", run)
            await emit(Failed(code="internal_error", message=message, record=failed))
            return
        await emit(Done(record=final))

    async def _open(self, command: Question, run: RunLedger) -> Record | Failed:
        """The record to answer, stored in one call: a new one, or one asked again; else why not."""
        try:
            if isinstance(command, AskAgain):  # answering again takes the stored, validated question
                return await self._records.reopen_record(command.record_id, command.conversation.as_id())
            text = validate_question(command.text, max_tokens=self._limits.question_max_tokens)
            record, created = await self._records.open_record(
                RecordOpening(
                    conversation=command.conversation,
                    question=text,
                    scope=command.scope,
                    event_key=command.event_key,
                    asked_by=command.asked_by,
                    reply_to=command.reply_to,
                )
            )
        except KbError as exc:
            # A blank or binary question, or a record that could not be read, carries no language: say both.
            has_words = isinstance(command, Ask) and any(ch.isalpha() for ch in command.text or "")
            message = exc.message(run.lang) if has_words else exc.in_both_languages()
            return Failed(code=exc.code, message=message)
        if not created:
            message = messages.text("error.duplicate_question", run.lang)
            return Failed(code="duplicate", message=message, record=record)
        return record

    async def _fail(
        self, record: Record, status: RecordStatus, reason: str, run: RunLedger, message: str = ""
    ) -> Record:
        # user_message: what the user was told, shown again on re-delivery
        details = replace(run.details(), user_message=message)
        return await self._records.fail_record(record.id, status=status, reason=reason, details=details)

    async def _answer(
        self,
        record: Record,
        scope: ConversationScope,
        run: RunLedger,
        emit: Callable[[Progress], Awaitable[None]],
    ) -> Record:
        text = record.question
        await emit(ContextLoading())
        context = await self._load_context(record, run, emit)
        since = time.monotonic()
        rewritten = await self._rewrite(context, text, run)
        query, carried = topic_query(text, rewritten, context.turns)
        since = run.lap("rewrite", since)
        datasets = tuple(dict.fromkeys(scope.datasets))
        if not datasets:
            raise NoKnowledgeBase()
        search_mode = scope.search_mode or self._limits.search_mode
        outcome = await self._retriever.retrieve(
            query,
            datasets=datasets,
            search_mode=search_mode,
            retrieval_mode=scope.retrieval_mode or self._limits.retrieval_mode,
            emit=emit,
        )
        since = run.lap("retrieval", since)
        run.charge(outcome.usage, outcome.model_calls)
        trace = replace(
            outcome.trace, rewritten=rewritten, carried=carried, datasets=datasets, search_mode=search_mode
        )
        run.trace = trace
        await emit(Generating(rounds=len(trace.rounds), stop_reason=outcome.stop_reason.value))
        shown = (
            text
            if rewritten == text
            else messages.text("prompt.standalone", run.lang, question=text, standalone=rewritten)
        )
        request = AnswerRequest(
            question=shown,
            evidence=outcome.hits,
            history=context.messages,
            sufficient=outcome.sufficient,
            stop_reason=outcome.stop_reason.value,
            missing=outcome.missing,
            lang=run.lang,
            standalone=rewritten,
        )
        answer, engine_name = await self._writer.write(request, run, emit)
        since = run.lap("generation", since)
        attributions: tuple[Attribution, ...] = ()
        supplied: tuple[SuppliedQuote, ...] = ()
        if not engine_name.startswith("extractive"):  # quotes carry their paragraph's marker already
            answer, attributions = await asyncio.to_thread(attribute, answer, outcome.hits, self._meaning)
            if self._left_out is not None and outcome.hits:
                cited_now = cited_numbers(answer, len(outcome.hits))
                supplied = await self._left_out.left_out(request, cited_now)
                if supplied:
                    quoted = left_out_text(supplied, run.lang)
                    await emit(AnswerDelta(text=f"\n\n{quoted}"))
                    answer = f"{answer.rstrip()}\n\n{quoted}"
        check = await asyncio.to_thread(
            check_claims,
            answer,
            outcome.hits,
            question=f"{text}\n{rewritten}",
            policy=self._limits.unsupported_claims,
            lang=run.lang,
        )
        run.lap("claims", since)
        if check.appended:
            await emit(AnswerDelta(text=f"\n\n{check.appended}"))
        answer = check.answer
        cited = citations(answer, outcome.hits)
        numbers = cited_numbers(answer, len(outcome.hits))  # an answer quoting nothing names no version
        versions = version_note([outcome.hits[n - 1].document_name for n in numbers], outcome.hits, run.lang)
        if versions:
            await emit(AnswerDelta(text=f"\n\n{versions}"))
            answer = f"{answer.rstrip()}\n\n{versions}"
        notice = None
        if not outcome.sufficient and not outcome.partial:
            multi_step = outcome.trace.mode == "multi"
            notice = uncertainty_notice(run.lang, missing=outcome.missing, multi_step=multi_step)
        elif check.missing:
            notice = uncertainty_notice(run.lang, missing=check.missing)
        if notice:
            await emit(Notice(text=notice))
            answer = f"{answer.rstrip()}\n\n{notice}"
        run.lap("total", run.started)
        details = replace(
            run.details(),
            engine=engine_name,
            notice=notice,
            citations=cited,
            evidence_ids=tuple(hit.id for hit in outcome.hits),
            unsupported=check.claims,
            attributions=attributions,
            supplied=supplied,
            usage=UsageTally(run.usage.prompt_tokens, run.usage.completion_tokens, run.model_calls),
        )
        return await self._records.complete_record(
            record.id, answer=answer, rewritten=rewritten, details=details
        )

    async def _load_context(
        self, record: Record, run: RunLedger, emit: Callable[[Progress], Awaitable[None]]
    ) -> LoadedContext:
        since = time.monotonic()
        announced = False

        async def on_compacting() -> None:
            nonlocal announced
            if not announced:
                announced = True
                await emit(Compacting())

        context = await self._context.load(
            record.conversation_id, before_id=record.id, on_compacting=on_compacting
        )
        run.lap("context", since)
        run.charge(context.usage, context.metadata.summary_calls)
        # The summary text itself (context.summary) stays in the conversation_context table, not in the record.
        run.context = context.metadata
        return context

    async def _rewrite(self, context: LoadedContext, text: str, run: RunLedger) -> str:
        history = list(context.turns)
        summary = context.summary if context.metadata.compacted_rounds else ""
        if summary:
            history.insert(0, Turn(record_id=0, question="[较早会话摘要 / earlier summary]", answer=summary))
        if not history:
            return text  # a first question makes no extra model call
        try:
            rewritten, usage = await self._engine.rewrite(history, text)
        except ModelError as exc:
            # A truncated or failed rewrite is never used: the fallback engine (extractive) rewrites instead,
            # so the follow-up keeps its topic; without one the original question is searched.
            log.warning("rewrite failed (%s); falling back", exc)
            run.rewrite_error = f"{exc.code}: {exc}"
            run.charge(Usage())
            return await self._fallback_rewrite(history, text, run)
        run.charge(usage)
        if normalize_query(rewritten) == normalize_query(text):
            # Small models hand an elliptical follow-up back unchanged (seen on Qwen2.5 0.5B): the extractive
            # rewrite decides whether it needs the earlier topic (it leaves a standalone question alone).
            run.rewrite_error = "model_unchanged: the model returned the question unchanged"
            return await self._fallback_rewrite(history, text, run)
        return rewritten.strip() or text

    async def _fallback_rewrite(self, history: list[Turn], text: str, run: RunLedger) -> str:
        if self._fallback is None:
            return text
        try:
            rewritten, _ = await self._fallback.rewrite(history, text)
        except ModelError as exc:
            log.warning("fallback rewrite failed too (%s); using the original question", exc)
            return text
        run.rewrite_engine = f"{self._fallback.name} (fallback)"
        return rewritten.strip() or text


__all__ = ["InvalidInput", "NoKnowledgeBase", "Pipeline", "PipelineLimits"]
