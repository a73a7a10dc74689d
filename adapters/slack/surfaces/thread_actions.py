"""Thread actions: compact a thread, show its retrieval trace, record feedback (shared by every trigger)."""

from __future__ import annotations

import contextlib
import logging
import time
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.delivery.slack_errors import error_code
from adapters.slack.inbound.threads import conversation_id, latest_answer, thread_records
from adapters.slack.pipeline_port import AnswerPipeline
from adapters.slack.rendering.blocks import SlackMessage, actions, button, context, section
from adapters.slack.rendering.final_messages import SHOW_TRACE, record_lang
from adapters.slack.rendering.mrkdwn import escape
from adapters.slack.rendering.texts import t
from adapters.slack.surfaces.trace_modal import trace_modal
from core.answering.trace_summary import trace_summary
from core.errors import KbError
from core.models import CompactionReport, ConversationKey, Record, RecordStatus

log = logging.getLogger(__name__)


def compaction_text(report: CompactionReport, lang: str) -> str:
    """The user-facing result of a manual compaction."""
    if report.compacted:
        return t("compacted", lang, rounds=report.compacted_rounds, revision=report.revision)
    if report.reason in ("no_history", "under_budget", "no_older_turns"):
        return t(report.reason, lang, rounds=report.compacted_rounds, revision=report.revision)
    return t("compact_failed", lang, reason=report.reason.removeprefix("failed").lstrip(": ") or "?")


class ThreadActions:
    """Compaction, traces and feedback for a thread, replying privately to the person who asked."""

    def __init__(self, client: AsyncWebClient, pipeline: AnswerPipeline) -> None:
        self.client = client
        self.pipeline = pipeline

    async def thread_lang(self, key: ConversationKey, fallback: str) -> str:
        """The language of the thread's latest record, else the fallback."""
        records = await thread_records(self.pipeline.store, key)
        return record_lang(records[-1]) if records else fallback

    async def compact(self, key: ConversationKey, lang: str) -> str:
        """Run manual compaction of the thread's context; the result as a sentence."""
        found = await conversation_id(self.pipeline.store, key)
        if found is None or not await thread_records(self.pipeline.store, key):
            return t("no_history", lang)
        try:
            return compaction_text(await self.pipeline.compact(found), lang)
        except KbError as exc:
            return t("compact_failed", lang, reason=exc.message(lang))

    async def record_for(self, key: ConversationKey, *, message_ts: str | None = None) -> Record | None:
        """The answer posted as message_ts in the thread if it is one of ours, else the latest answer."""
        if message_ts:
            ref = f"{key.channel_id}:{message_ts}"
            for record in reversed(await thread_records(self.pipeline.store, key)):
                if record.reply_ref == ref and record.status == RecordStatus.ANSWERED:
                    return record
        return await latest_answer(self.pipeline.store, key)

    async def open_trace(self, trigger_id: str, record: Record, *, page: int = 0) -> bool:
        """Open the trace modal; False when Slack refused (e.g. the trigger expired)."""
        try:
            await self.client.views_open(trigger_id=trigger_id, view=trace_modal(record, page=page))
            return True
        except SlackApiError as exc:
            log.warning("views.open failed: %s", error_code(exc))
            return False

    async def turn_page(self, *, view_id: str, view_hash: str | None, value: str) -> None:
        """Show another page of an open trace modal (button value "record_id:page")."""
        record_id, _, page = value.partition(":")
        record = await self.pipeline.store.get_record(int(record_id))
        if record is None:
            return
        with contextlib.suppress(SlackApiError):
            await self.client.views_update(
                view_id=view_id, hash=view_hash, view=trace_modal(record, page=int(page or 0))
            )

    def trace_card(self, record: Record) -> SlackMessage:
        """A private message with the trace summary and a button that opens the full trace."""
        lang = record_lang(record)
        summary = trace_summary(record.details, lang) or "—"
        return SlackMessage(
            text=f"{t('trace_ready', lang)} {summary}",
            blocks=[
                section(f"*{t('trace_ready', lang)}* {escape(summary)}"),
                actions(button(t("show_trace", lang), action_id=SHOW_TRACE, value=str(record.id))),
            ],
        )

    async def record_feedback(self, record_id: int, *, user_id: str, value: str) -> Record | None:
        """Store a user's 👍/👎 on the record (details["feedback"][user] = {"value", "at"})."""
        record = await self.pipeline.store.get_record(record_id)
        if record is None:
            return None
        feedback: dict[str, Any] = dict(record.details.get("feedback") or {})
        feedback[user_id] = {"value": value, "at": time.time()}
        await self.pipeline.store.update_details(record_id, {"feedback": feedback})
        return record

    async def tell(
        self,
        *,
        channel: str,
        user: str,
        thread_ts: str | None,
        message: SlackMessage,
        response_url: str | None = None,
    ) -> None:
        """An ephemeral reply to one person (chat.postEphemeral; the interaction's response_url as fallback)."""
        try:
            await self.client.chat_postEphemeral(
                channel=channel, user=user, thread_ts=thread_ts, text=message.text, blocks=message.blocks
            )
            return
        except SlackApiError as exc:
            log.info("chat.postEphemeral in %s failed: %s", channel, error_code(exc))
        if response_url:
            from slack_sdk.webhook.async_client import AsyncWebhookClient

            with contextlib.suppress(Exception):
                await AsyncWebhookClient(response_url).send(
                    text=message.text,
                    blocks=message.blocks,
                    response_type="ephemeral",
                    replace_original=False,
                )


def plain(text: str) -> SlackMessage:
    """A one-section private reply."""
    return SlackMessage(text=text[:300], blocks=[section(escape(text))] if text else [context("—")])
