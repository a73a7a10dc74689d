"""One answer's reply while it is being prepared: the placeholder (queued in its channel), the phase edits,
then the final delivery through the outbox.

The placeholder is posted in the background, in its channel's turn. Until it is out, phase changes only
replace what it will show; if the answer is ready before the channel's turn comes, the first post carries
the final content and no placeholder is ever shown. Once it is out, phases become throttled edits
(MessageEditor) and the final content replaces it (Outbox.deliver).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import replace

from adapters.slack.delivery.ledger import DeliveryState, Tracked
from adapters.slack.delivery.outbox import Destination, Outbox
from adapters.slack.delivery.slack_errors import CallFailure
from adapters.slack.rendering.blocks import SlackMessage
from adapters.slack.rendering.progress_line import ProgressView, placeholder_message
from adapters.slack.reply.message_editor import MessageEditor
from core.events import Progress, Queued
from core.record import Record

Render = SlackMessage | Callable[[], SlackMessage]


class LiveReply:
    """The Slack side of one answer in flight; finish() ends it, close() abandons it."""

    def __init__(
        self,
        outbox: Outbox,
        tracked: Tracked,
        destination: Destination,
        *,
        min_edit_interval: float,
        placeholder_ts: str | None = None,
        view: ProgressView | None = None,
    ) -> None:
        self.outbox = outbox
        self.tracked = tracked
        self.destination = destination
        self.min_edit_interval = min_edit_interval
        self.view = view or ProgressView(lang=destination.lang)
        self._placeholder_ts = placeholder_ts
        self.editor: MessageEditor | None = None
        self._latest: Render | None = None
        self._final: list[SlackMessage] | None = None
        self._first_is_final = False
        self._sent: Render | None = None
        self._opening: asyncio.Task[None] | None = None
        if placeholder_ts is not None:  # answering again in place (an interrupted record resumed)
            self._start_editing(placeholder_ts)

    def begin(self, *, queued_behind: int = 0) -> None:
        """Show that the question is being worked on: queue the placeholder post, or (answering again in
        place) edit the visible reply into it."""
        if queued_behind:
            self.view.apply(Queued(position=queued_behind))
        if self._placeholder_ts is None:
            self.open(placeholder_message(self.destination.lang, queued_behind=queued_behind))
        else:
            self.show(self.view.message)

    def progress(self, event: Progress) -> None:
        """Fold a pipeline event into what the reply shows (an edit when it changed; never blocks)."""
        if self.view.apply(event):
            self.show(self.view.message)

    def open(self, placeholder: Render) -> None:
        """Queue the placeholder post in its channel (returns at once)."""
        self._latest = placeholder
        if self.editor is None and self._opening is None:
            self._opening = asyncio.create_task(
                self._post_first(), name=f"placeholder {self.tracked.record.id}"
            )

    def _render_first(self) -> SlackMessage:
        if self._final is not None:
            self._first_is_final = True
            return self._final[0]
        self._first_is_final = False
        latest = self._sent = self._latest
        assert latest is not None
        return latest if isinstance(latest, SlackMessage) else latest()

    async def _post_first(self) -> None:
        self.tracked, ts, failure, tries = await self.outbox.post_reply(
            self.tracked, self.destination, self._render_first
        )
        delivery = replace(self.tracked.delivery, attempts=self.tracked.delivery.attempts + tries)
        if ts is None:
            error = failure.code if failure else "unknown"
            self.tracked = await self.outbox.save(self.tracked, replace(delivery, error=error))
            return
        parts = 1 if self._first_is_final else 0
        delivery = replace(
            delivery,
            state=DeliveryState.PLACEHOLDER,
            parts=parts,
            error="",
            reply_ref=self.destination.ref(ts),
        )
        self.tracked = await self.outbox.save(self.tracked, delivery)
        if not self._first_is_final:
            self._start_editing(ts)
            if self.editor is not None and self._latest is not self._sent and self._latest is not None:
                self.editor.show(self._latest)  # a phase reached while the post was on its way

    def _start_editing(self, ts: str) -> None:
        self.editor = MessageEditor(
            self.outbox.client,
            channel=self.destination.channel,
            ts=ts,
            budget=self.outbox.budget,
            min_interval=self.min_edit_interval,
        )

    def show(self, message: Render) -> None:
        """The latest intermediate state (a phase, streamed text); never blocks."""
        self._latest = message
        if self.editor is not None:
            self.editor.show(message)

    async def finish(self, record: Record, messages: list[SlackMessage]) -> Tracked:
        """Deliver the final messages (the record as the pipeline finished it); returns it with its delivery."""
        self._final = messages
        if self._opening is not None:
            await self._opening
        current = Tracked(record, self.tracked.delivery)
        first_edit = None
        if self.editor is not None:
            editor = self.editor

            async def first_edit(message: SlackMessage) -> CallFailure | None:
                return await editor.finish(message)

        try:
            self.tracked = await self.outbox.deliver(
                current, messages, self.destination, first_edit=first_edit
            )
        finally:
            await self.close()
        return self.tracked

    async def close(self) -> None:
        """Stop editing and abandon a placeholder post still queued (shutdown, a crash of the handler)."""
        if self._opening is not None and not self._opening.done():
            self._opening.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._opening
        if self.editor is not None:
            await self.editor.close()
