"""One question, answered in its Slack thread: placeholder, status, phase edits, final message or failure."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.blocks import SlackMessage
from adapters.slack.channel_config import ChannelConfig
from adapters.slack.editor import MessageEditor
from adapters.slack.pipeline_port import AnswerPipeline
from adapters.slack.progress import ProgressView, placeholder_message
from adapters.slack.rate_budget import UpdateBudget
from adapters.slack.render import answer_messages, notice_message, record_lang
from adapters.slack.slack_errors import error_code
from adapters.slack.texts import failure_text, t
from adapters.slack.threads import EngagedThreads
from adapters.slack.triggers import IncomingMessage
from adapters.slack.users import UserNames
from core.events import Done, Failed
from core.models import Question, RetrievalMode, SearchMode

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Placeholder:
    """The bot's reply that is edited in place, and the language it speaks."""

    channel: str
    ts: str
    thread_ts: str
    lang: str

    @property
    def ref(self) -> str:
        """The record's reply_ref: "channel:ts"."""
        return f"{self.channel}:{self.ts}"


class Answerer:
    """Runs questions through the pipeline and keeps their thread replies up to date."""

    def __init__(
        self,
        client: AsyncWebClient,
        pipeline: AnswerPipeline,
        *,
        budget: UpdateBudget,
        engaged: EngagedThreads,
        min_edit_interval: float,
    ) -> None:
        self.client = client
        self.pipeline = pipeline
        self.budget = budget
        self.engaged = engaged
        self.min_edit_interval = min_edit_interval
        self.names = UserNames(client)
        self.placeholders: dict[asyncio.Task[Any], Placeholder] = {}
        self._active: dict[str, int] = {}
        self._turns: dict[str, asyncio.Event] = {}
        self._background: set[asyncio.Task[None]] = set()

    async def post(self, channel: str, thread_ts: str, message: SlackMessage) -> str | None:
        """Post a reply in the thread; its ts, or None when Slack refused it."""
        try:
            response = await self.client.chat_postMessage(
                channel=channel, thread_ts=thread_ts, text=message.text, blocks=message.blocks
            )
            return str(response["ts"])
        except SlackApiError as exc:
            log.warning("chat.postMessage in %s failed: %s", channel, error_code(exc))
            return None

    async def answer(
        self, message: IncomingMessage, *, lang: str, config: ChannelConfig, bot_user_id: str
    ) -> None:
        """Answer one question in its thread; every outcome ends in a final edit of the placeholder.

        Questions of one thread reach the pipeline in arrival order: each waits until the previous one
        has entered the pipeline (holding or queued on the conversation lock) before asking.
        """
        if not config.datasets:
            await self.post(message.channel_id, message.thread_ts, notice_message(t("no_kb", lang)))
            return
        self.engaged.remember(message.key)  # before any await: a quick follow-up must see it
        key_id = message.key.as_id()
        ahead = self._active.get(key_id, 0)
        self._active[key_id] = ahead + 1
        previous, entered = self._turns.get(key_id), asyncio.Event()
        self._turns[key_id] = entered
        task = asyncio.current_task()
        try:
            ts = await self.post(
                message.channel_id, message.thread_ts, placeholder_message(lang, queued_behind=ahead)
            )
            if ts is None:
                return
            placeholder = Placeholder(message.channel_id, ts, message.thread_ts, lang)
            if task is not None:
                self.placeholders[task] = placeholder
            self._in_background(self._set_status(placeholder, t("status", lang)))
            question = Question(
                conversation=message.key,
                text=await self.names.plain_text(message.raw_text, bot_user_id=bot_user_id),
                datasets=tuple(config.datasets),
                event_key=message.event_key,
                reply_ref=placeholder.ref,
                retrieval_mode=_retrieval_mode(config.retrieval_mode),
                search_mode=_search_mode(config.search_mode),
            )
            if previous is not None:
                await previous.wait()
            await self._run(question, placeholder, entered)
        finally:
            entered.set()
            if self._turns.get(key_id) is entered:
                del self._turns[key_id]
            self._active[key_id] -= 1
            if not self._active[key_id]:
                del self._active[key_id]
            if task is not None:
                self.placeholders.pop(task, None)

    async def _run(self, question: Question, placeholder: Placeholder, entered: asyncio.Event) -> None:
        editor = MessageEditor(
            self.client,
            channel=placeholder.channel,
            ts=placeholder.ts,
            budget=self.budget,
            min_interval=self.min_edit_interval,
        )
        view = ProgressView(lang=placeholder.lang)
        try:
            async with contextlib.aclosing(self.pipeline.ask(question)) as events:  # type: ignore[type-var]
                async for event in events:
                    entered.set()
                    if isinstance(event, Done):
                        await self._deliver(editor, placeholder, event)
                        return
                    if isinstance(event, Failed):
                        await self._fail(editor, placeholder, event, question.text)
                        return
                    if view.apply(event):
                        editor.show(view.message)
            log.error("the pipeline ended without a final event for %s", question.event_key)
            await editor.finish(notice_message(t("internal_error", placeholder.lang)))
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("answering %s failed", question.event_key)
            await editor.finish(notice_message(t("internal_error", placeholder.lang)))
        finally:
            await editor.close()
            self._in_background(self._set_status(placeholder, ""))

    async def _deliver(self, editor: MessageEditor, placeholder: Placeholder, done: Done) -> None:
        messages = answer_messages(done.record)
        if not await editor.finish(messages[0]):
            await self.post(placeholder.channel, placeholder.thread_ts, messages[0])
        for extra in messages[1:]:
            await self.post(placeholder.channel, placeholder.thread_ts, extra)

    async def _fail(self, editor: MessageEditor, placeholder: Placeholder, failed: Failed, text: str) -> None:
        if failed.code == "duplicate":
            # Another delivery of this message (a retry after a restart) already has its answer.
            await editor.close()
            with contextlib.suppress(SlackApiError):
                await self.client.chat_delete(channel=placeholder.channel, ts=placeholder.ts)
            return
        lang = record_lang(failed.record, text) if failed.record else placeholder.lang
        reason = failure_text(failed.code, failed.message, failed.details, lang)
        await editor.finish(notice_message(t("failed", lang, message=reason)))

    async def _set_status(self, placeholder: Placeholder, status: str) -> None:
        """assistant.threads.setStatus; it may fail outside assistant threads, which is fine."""
        with contextlib.suppress(SlackApiError):
            await self.client.assistant_threads_setStatus(
                channel_id=placeholder.channel, thread_ts=placeholder.thread_ts, status=status
            )

    def _in_background(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def drain_background(self) -> None:
        """Wait for status updates still in flight."""
        if self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)

    async def mark_interrupted(self, placeholders: list[Placeholder]) -> None:
        """Edit each placeholder into the "interrupted" message (final edits, within the budget)."""
        for placeholder in placeholders:
            editor = MessageEditor(
                self.client,
                channel=placeholder.channel,
                ts=placeholder.ts,
                budget=self.budget,
                min_interval=0.0,
            )
            await editor.finish(notice_message(t("interrupted", placeholder.lang)))


def _retrieval_mode(value: str | None) -> RetrievalMode | None:
    return value if value in ("auto", "single", "multi") else None  # type: ignore[return-value]


def _search_mode(value: str | None) -> SearchMode | None:
    return value if value in ("embedding", "keywords", "blend") else None  # type: ignore[return-value]
