"""Context compaction: a persistent rolling summary with a watermark, triggered by tokens only.

See docs/design.md#compaction.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Protocol

from core.budget import clip, setting
from core.conversation.compaction_batches import (
    BatchLimits,
    recent_window_budget,
    summary_room,
    take_batch,
    trim_recent,
    turns_tokens,
)
from core.conversation.compaction_facts import merge_key_facts
from core.conversation.compaction_messages import (
    history_messages,
    label_overhead,
    messages_tokens,
    summary_message_tokens,
)
from core.errors import ContextConflict, KbError, ModelOutputInvalid
from core.models import CompactionReport, ContextSnapshot, ContextStats, LoadedContext, Turn, Usage
from core.ports import ContextSnapshots, ConversationLock, Conversations, Engine
from core.text import detect_language

log = logging.getLogger(__name__)

PAGE_SIZE = 20
NO_UPPER_BOUND = 2**63 - 1  # before_id for manual compaction: every answered record counts
OnCompacting = Callable[[], Awaitable[None]]


async def _no_progress() -> None:
    return None


class HistoryStore(Conversations, ContextSnapshots, Protocol):
    """What compaction reads and writes: answered turns, and the conversation's context snapshot."""


@dataclass(slots=True)
class _Run:
    """What one load did: the snapshot it ends with, summary calls, usage and the first failure."""

    state: ContextSnapshot
    calls: int = 0
    saved: int = 0
    usage: Usage = field(default_factory=Usage)
    error: str | None = None


class CompactingContextLoader:
    """ContextLoader with a rolling summary: raw turns while under the token budget, compaction above it.

    It only reads records and writes the context snapshot (optimistically, on its revision); the caller
    holds the conversation lock, as the pipeline does for a generation and compact_conversation does.
    """

    def __init__(
        self,
        *,
        store: HistoryStore,
        engine: Engine,
        dialogue_number: int = 5,
        recent_tokens: int = 6000,
        summary_max_tokens: int = 1800,
        batch_limits: BatchLimits = BatchLimits(),
        lang: str | None = None,
    ) -> None:
        self._store = store
        self._engine = engine
        self._keep = setting("KB_DIALOGUE_NUMBER", dialogue_number, 5, 0, 20)
        self.budget = setting("KB_CONTEXT_RECENT_TOKENS", recent_tokens, 6000, 512, 16000)
        self._summary_max = setting("summary_max_tokens", summary_max_tokens, 1800, 256, 8000)
        self._limits = batch_limits
        self._lang = lang
        self._window = recent_window_budget(self.budget, self._summary_max)
        self._summary_text_cap = max(0, summary_room(self.budget, self._summary_max) - label_overhead())

    async def load(
        self, conversation_id: str, *, before_id: int, on_compacting: OnCompacting
    ) -> LoadedContext:
        """History strictly before before_id; summarises only when the estimate exceeds the budget."""
        if self._keep == 0:
            # History turned off: no turns are read and an existing summary is not used either.
            return LoadedContext(metadata=self._disabled_metadata())
        state = await self._store.read_context(conversation_id)
        if state.through_record_id >= before_id:
            return await self._load_behind_watermark(conversation_id, state, before_id)
        unsummarised, estimated = await self._probe(conversation_id, state, before_id)
        exceeded = estimated > self.budget
        run = _Run(state)
        recent = unsummarised
        if exceeded:
            latest = await self._store.recent_turns(
                conversation_id, before_id=before_id, after_id=state.through_record_id, limit=self._keep
            )
            recent = trim_recent(latest, self._window)
            boundary = recent[0].record_id if recent else before_id
            await self._compact(conversation_id, run, boundary=boundary, on_compacting=on_compacting)
        lang = self._lang or detect_language(run.state.summary + " ".join(t.question for t in recent))
        # A summary stored under a larger budget is clipped for sending; the stored one stays as it is.
        summary = clip(run.state.summary, self._summary_text_cap, lang=lang)
        messages, sent = history_messages(summary, recent, budget=self.budget, lang=lang)
        metadata = self._metadata(
            reason=_reason(run, exceeded=exceeded, has_history=bool(recent or run.state.summary)),
            state=run.state,
            compacted=run.saved > 0,
            recent_rounds=len(sent),
            exceeded=exceeded,
            estimated=messages_tokens(messages),
        )
        metadata = replace(metadata, summary_calls=run.calls, compaction_error=run.error or "")
        # The summary as sent: the pipeline gives it to the rewrite role.
        return LoadedContext(
            messages=messages, turns=sent, metadata=metadata, summary=summary, usage=run.usage
        )

    async def _load_behind_watermark(
        self, conversation_id: str, state: ContextSnapshot, before_id: int
    ) -> LoadedContext:
        """Re-asking a question the summary already covers: the summary holds later turns, so it is not
        used; the latest turns before the question are sent raw, trimmed to the budget, and nothing moves."""
        latest = await self._store.recent_turns(
            conversation_id, before_id=before_id, after_id=0, limit=self._keep
        )
        recent = trim_recent(latest, self.budget)
        lang = self._lang or detect_language(" ".join(t.question for t in recent))
        messages, sent = history_messages("", recent, budget=self.budget, lang=lang)
        metadata = self._metadata(
            reason="summary_covers_later_turns",
            state=state,
            compacted=False,
            recent_rounds=len(sent),
            exceeded=False,
            estimated=messages_tokens(messages),
        )
        return LoadedContext(messages=messages, turns=sent, metadata=metadata)

    async def _probe(
        self, conversation_id: str, state: ContextSnapshot, before_id: int
    ) -> tuple[list[Turn], int]:
        """Unsummarised turns read in pages of 20 from the watermark, stopping once over the budget."""
        turns: list[Turn] = []
        cursor = state.through_record_id
        estimated = summary_message_tokens(state.summary)
        while estimated <= self.budget:
            page = await self._store.turns_after(
                conversation_id, after_id=cursor, before_id=before_id, limit=PAGE_SIZE
            )
            if not page:
                break
            turns.extend(page)
            estimated += turns_tokens(page)
            cursor = page[-1].record_id
        return turns, estimated

    async def _compact(
        self, conversation_id: str, run: _Run, *, boundary: int, on_compacting: OnCompacting
    ) -> None:
        """Merge everything between the watermark and the recent window into the summary, batch by batch.

        Each batch advances the watermark to its own last turn; the first failure stops the loop and
        leaves the stored snapshot exactly as the last successful batch (or the caller) left it.
        """
        while True:
            page = await self._store.turns_after(
                conversation_id, after_id=run.state.through_record_id, before_id=boundary, limit=PAGE_SIZE
            )
            if not page:
                return
            batch = take_batch(page, self._limits)
            if run.calls == 0:
                await on_compacting()
            run.calls += 1
            try:
                text, usage = await self._engine.summarise(
                    run.state.summary, batch, max_tokens=self._summary_max
                )
                run.usage += usage
                if not text.strip():
                    raise ModelOutputInvalid("empty summary")
                following = self._snapshot_after(run.state, batch, text)
                saved = await self._store.save_context(
                    conversation_id, expected_revision=run.state.revision, snapshot=following
                )
                if not saved:
                    raise ContextConflict(f"revision {run.state.revision} of {conversation_id} changed")
            except KbError as exc:
                log.warning("compaction of %s failed, watermark kept: %s: %s", conversation_id, exc.code, exc)
                run.error = exc.code
                return
            run.state = following
            run.saved += 1

    def _snapshot_after(self, state: ContextSnapshot, batch: list[Turn], text: str) -> ContextSnapshot:
        lang = self._lang or detect_language(" ".join(t.question for t in batch))
        summary = merge_key_facts(
            text,
            previous=state.summary,
            batch_texts=[part for turn in batch for part in (turn.question, turn.answer)],
            budget=self._summary_text_cap,
            lang=lang,
        )
        return ContextSnapshot(
            summary=summary,
            through_record_id=batch[-1].record_id,
            compacted_rounds=state.compacted_rounds + len(batch),
            revision=state.revision + 1,
        )

    async def snapshot(self, conversation_id: str) -> ContextSnapshot:
        """The stored summary, watermark and revision (for reports and `kb context`)."""
        return await self._store.read_context(conversation_id)

    def _disabled_metadata(self) -> ContextStats:
        return ContextStats(
            enabled=False,
            compacted=False,
            recent_rounds=0,
            token_budget=self.budget,
            threshold_exceeded=False,
            compaction_reason="history_disabled",
            estimated_tokens=0,
        )

    def _metadata(
        self,
        *,
        reason: str,
        state: ContextSnapshot,
        compacted: bool,
        recent_rounds: int,
        exceeded: bool,
        estimated: int,
    ) -> ContextStats:
        return _with_snapshot(
            ContextStats(
                enabled=True,
                compacted=compacted,
                recent_rounds=recent_rounds,
                token_budget=self.budget,
                threshold_exceeded=exceeded,
                compaction_reason=reason,
                estimated_tokens=estimated,
            ),
            state,
        )


def _reason(run: _Run, *, exceeded: bool, has_history: bool) -> str:
    if run.error:
        return "failed"
    if run.saved:
        return "token_budget_exceeded"
    if exceeded:
        return "no_older_turns"  # e.g. one long turn: nothing before the recent window to summarise
    return "under_budget" if has_history else "no_history"


async def compact_conversation(
    conversation_id: str,
    *,
    loader: CompactingContextLoader,
    lock: ConversationLock,
    on_compacting: OnCompacting = _no_progress,
) -> CompactionReport:
    """Manual compaction: the same token threshold as a question, under the conversation's lock.

    A conversation under the budget reports "under_budget" and makes no model call.
    """
    async with lock.hold(conversation_id):
        context = await loader.load(conversation_id, before_id=NO_UPPER_BOUND, on_compacting=on_compacting)
        metadata = context.metadata
        if not metadata.enabled:
            metadata = _with_snapshot(metadata, await loader.snapshot(conversation_id))
    reason = metadata.compaction_reason or ""
    if metadata.compaction_error:
        reason = f"failed: {metadata.compaction_error}"
    return CompactionReport(
        compacted=bool(metadata.compacted),
        compacted_rounds=metadata.compacted_rounds or 0,
        revision=metadata.revision or 0,
        through_record_id=metadata.through_record_id or 0,
        reason=reason,
        summary_calls=metadata.summary_calls,
    )


def _with_snapshot(stats: ContextStats, state: ContextSnapshot) -> ContextStats:
    """The statistics with the snapshot's revision, compacted rounds and watermark."""
    return replace(
        stats,
        revision=state.revision,
        compacted_rounds=state.compacted_rounds,
        through_record_id=state.through_record_id,
    )
