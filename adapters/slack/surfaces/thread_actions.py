"""Thread actions: compact a thread, show its retrieval trace, record feedback (shared by every trigger)."""

from __future__ import annotations

import contextlib
import logging

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.delivery.ledger import DeliveryLedger
from adapters.slack.delivery.slack_errors import error_code
from adapters.slack.inbound.threads import conversation_id, latest_answer, thread_records
from adapters.slack.pipeline_port import AnswerPipeline, SlackReads
from adapters.slack.rendering.blocks import SlackMessage, actions, button, context, section
from adapters.slack.rendering.final_messages import SHOW_TRACE, record_lang
from adapters.slack.rendering.mrkdwn import escape
from adapters.slack.rendering.texts import t
from adapters.slack.surfaces.trace_modal import trace_modal
from core.answering.trace_summary import trace_summary
from core.commands import GiveFeedback
from core.errors import KbError
from core.models import CompactionReport, ConversationKey, RecordStatus
from core.record import Record

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

    def __init__(
        self, client: AsyncWebClient, pipeline: AnswerPipeline, reads: SlackReads, ledger: DeliveryLedger
    ) -> None:
        self.client = client
        self.pipeline = pipeline
        self.reads = reads
        self.ledger = ledger

    async def thread_lang(self, key: ConversationKey, fallback: str) -> str:
        """The language of the thread's latest record, else the fallback."""
        records = await thread_records(self.reads, key)
        return record_lang(records[-1]) if records else fallback

    async def compact(self, key: ConversationKey, lang: str) -> str:
        """Run manual compaction of the thread's context; the result as a sentence."""
        found = await conversation_id(self.reads, key)
        if found is None or not await thread_records(self.reads, key):
            return t("no_history", lang)
        try:
            return compaction_text(await self.pipeline.compact(found), lang)
        except KbError as exc:
            return t("compact_failed", lang, reason=exc.message(lang))

    async def record_for(self, key: ConversationKey, *, message_ts: str | None = None) -> Record | None:
        """The answer posted as message_ts in the thread if it is one of ours, else the latest answer."""
        if message_ts:
            ref = f"{key.channel_id}:{message_ts}"
            for record in reversed(await thread_records(self.reads, key)):
                if record.status != RecordStatus.ANSWERED:
                    continue
                delivery = await self.ledger.read_delivery(record.id)
                if delivery is not None and delivery.reply_ref == ref:
                    return record
        return await latest_answer(self.reads, key)

    async def run(
        self,
        key: ConversationKey,
        command: str,
        *,
        user: str,
        lang: str,
        trigger_id: str | None = None,
        message_ts: str | None = None,
        response_url: str | None = None,
    ) -> None:
        """Compact the thread or show its trace, replying privately to the person who asked."""
        lang = await self.thread_lang(key, lang)

        async def tell(message: SlackMessage) -> None:
            await self.tell(
                channel=key.channel_id,
                user=user,
                thread_ts=key.thread_ts,
                message=message,
                response_url=response_url,
            )

        if command == "compact":
            await tell(plain(await self.compact(key, lang)))
            return
        record = await self.record_for(key, message_ts=message_ts)
        if record is None:
            await tell(plain(t("no_answer_here", lang)))
        elif not (trigger_id and await self.open_trace(trigger_id, record)):
            await tell(self.trace_card(record))

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
        record = await self.reads.get_record(int(record_id))
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
        """Hand a user's 👍/👎 to the pipeline (kept as the record's details.feedback, one verdict per user)."""
        return await self.pipeline.feedback(GiveFeedback(record_id, user_id, value))

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
