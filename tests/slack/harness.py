"""A running bot for tests: mock Slack Web API + real SlackBot/AsyncApp served over HTTP + signed requests."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import itertools
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import replace
from typing import Any, cast
from urllib.parse import urlencode

import aiohttp
from aiohttp.test_utils import TestServer

from adapters.slack.app import SlackBot, SlackOptions, build_web_client
from adapters.slack.delivery.ledger import Delivery, DeliveryLedger
from adapters.slack.delivery.outbox import OutboxOptions
from adapters.slack.inbound.channel_config import ChannelConfig
from adapters.slack.pipeline_port import AnswerPipeline
from adapters.slack.web import EVENTS_PATH, build_web_app
from adapters.store.backends import SqlConversationStore
from adapters.store.delivery_ledger import SqlDeliveryLedger
from bot.compose.slack import build_slack_bot
from bot.settings import Settings
from core.knowledge.ingest_plan import TitledDocument
from core.record import Record
from core.sources.models import SourceState
from tests.fakes import InMemoryConversationStore, InMemoryDeliveryLedger
from tests.slack.fake_pipeline import FakePipeline
from tests.slack.mock_slack_api import MockSlackApi
from tests.slack.mock_slack_methods import PostedMessage

SECRET = "test-signing-secret"
FAST_DELIVERY = OutboxOptions(post_rate=50.0, post_burst=10, retry_base=0.05, redeliver_base=0.05)
FAST = SlackOptions(
    min_edit_interval=0.05,
    shutdown_grace=0.5,
    delivery=FAST_DELIVERY,
    sweep_interval=0.1,
    delivery_settle=0.2,
    streaming="edit",
    stream_interval=0.05,
)
NATIVE = replace(FAST, streaming="auto")
NOTICE = replace(FAST, resume_interrupted=False)  # KB_RESUME_INTERRUPTED=false: "please ask again"


def default_settings() -> Settings:
    """C1: docs; CQUIET: docs, mention-only; CNONE: no datasets; everything else: the default entry."""
    return Settings(
        channels={
            "C1": ChannelConfig(datasets=["docs"], retrieval_mode="multi"),
            "CQUIET": ChannelConfig(datasets=["docs"], mention_only=True),
            "CNONE": ChannelConfig(datasets=[]),
            "default": ChannelConfig(datasets=["docs"]),
        }
    )


def ledger_for(store: InMemoryConversationStore | SqlConversationStore) -> DeliveryLedger:
    """The delivery ledger over the same records as the store (in memory, or on the same database)."""
    if isinstance(store, InMemoryConversationStore):
        return InMemoryDeliveryLedger(store)
    return SqlDeliveryLedger(store.database)


def progress_seen(message: PostedMessage) -> str:
    """Everything a reply showed while it worked: its intermediate edits (edit path), or every task update
    of its timeline, titles, details and outputs (native streaming)."""
    if message.task_history:
        return "\n".join(
            " ".join(str(task.get(key) or "") for key in ("title", "details", "output"))
            for task in message.task_history
        )
    return "\n".join(str(version["blocks"]) for version in message.versions)


def sign(body: str, *, timestamp: int, secret: str = SECRET) -> str:
    """Slack's v0 request signature."""
    base = f"v0:{timestamp}:{body}".encode()
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


class FakeCatalogue:
    """The knowledge base's datasets and documents, as the Slack surfaces read them (KnowledgeCatalogue)."""

    def __init__(self, documents: dict[str, list[TitledDocument]] | None = None) -> None:
        self.documents = documents if documents is not None else default_documents()
        self.listed = 0

    async def list_datasets(self) -> list[str]:
        self.listed += 1
        return list(self.documents)

    async def list_titled_documents(self, dataset: str) -> list[TitledDocument]:
        return list(self.documents.get(dataset, []))


def document(dataset: str, title: str, *, at: float, chunks: int = 3, enabled: bool = True) -> TitledDocument:
    """A document named after its file, titled `title`."""
    slug = title.lower().replace(" ", "-")
    return TitledDocument(dataset, slug, f"{slug}.md", f"{slug}.md", "h", enabled, chunks, at, title=title)


def default_documents() -> dict[str, list[TitledDocument]]:
    """docs: two guides and a disabled draft; laws: one Chinese statute."""
    return {
        "docs": [
            document("docs", "Deploy guide", at=1_780_000_000.0),
            document("docs", "Rollback runbook", at=1_790_000_000.0),
            document("docs", "Old draft", at=1_795_000_000.0, enabled=False),
        ],
        "laws": [document("laws", "行政复议法", at=1_785_000_000.0, chunks=40)],
    }


class SlackHarness:
    """Start with `await harness.start()`; send events with event()/shortcut()/action()/command()."""

    def __init__(
        self,
        *,
        pipeline: AnswerPipeline | None = None,
        store: Any = None,
        settings: Settings | None = None,
        options: SlackOptions = FAST,
        mock: MockSlackApi | None = None,
        all_datasets: Callable[[], Awaitable[Sequence[str]]] | None = None,
        catalogue: FakeCatalogue | None = None,
        sources: Callable[[], Awaitable[Sequence[SourceState]]] | None = None,
    ) -> None:
        self.all_datasets = all_datasets
        self.sources = sources
        self.catalogue = catalogue or FakeCatalogue()
        self.mock = mock or MockSlackApi()
        self.pipeline: Any = pipeline or FakePipeline()
        self.store: Any = store if store is not None else cast(Any, self.pipeline).store  # what the bot reads
        self.ledger = ledger_for(self.store)
        self.settings = settings or default_settings()
        self.options = options
        self._ids = itertools.count(1)
        self.bot: SlackBot
        self.server: TestServer
        self.session: aiohttp.ClientSession

    def delivery_of(self, record: Record) -> Delivery | None:
        """The record's delivery as the ledger holds it (an in-memory store's; SQL stores: ledger.read_delivery)."""
        deliveries: dict[int, Delivery] = self.store.deliveries
        return deliveries.get(record.id)

    def reply_ref_of(self, record: Record) -> str | None:
        """The record's visible reply ("channel:ts"), None before one is shown."""
        delivery = self.delivery_of(record)
        return None if delivery is None else delivery.reply_ref

    async def start(self, *, recover: bool = True) -> SlackHarness:
        if not self.mock.port:
            await self.mock.start()
        self.session = aiohttp.ClientSession()
        client = build_web_client("xoxb-test", base_url=self.mock.url, session=self.session)
        self.bot = build_slack_bot(
            client=client,
            pipeline=self.pipeline,
            reads=self.store,
            ledger=self.ledger,
            channel_config=self.settings.channel,
            signing_secret=SECRET,
            options=self.options,
            all_datasets=self.all_datasets,
            catalogue=self.catalogue,
            channel_scopes=self.settings.channels,
            sources=self.sources,
        )
        if recover:
            await self.bot.start()
        self.server = TestServer(build_web_app(self.bot))
        await self.server.start_server()
        return self

    @classmethod
    @contextlib.asynccontextmanager
    async def running(cls, **options: Any) -> AsyncIterator[SlackHarness]:
        """A started harness (the constructor's options); on exit the bot and the mock stop, and the mock must
        have seen no violation of Slack's rules."""
        harness = await cls(**options).start()
        try:
            yield harness
        finally:
            await harness.close()
            await harness.mock.close()
        assert harness.mock.violations == []

    async def close(self, *, shutdown: bool = True) -> None:
        if shutdown:
            await self.bot.shutdown(grace=5.0)
        await self.server.close()
        await self.session.close()

    async def post(
        self,
        body: str,
        *,
        content_type: str = "application/json",
        timestamp: int | None = None,
        secret: str = SECRET,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, str]:
        """POST a signed request to /slack/events; (status, body)."""
        stamp = int(time.time()) if timestamp is None else timestamp
        all_headers = {
            "Content-Type": content_type,
            "X-Slack-Request-Timestamp": str(stamp),
            "X-Slack-Signature": sign(body, timestamp=stamp, secret=secret),
            **(headers or {}),
        }
        async with self.session.post(
            self.server.make_url(EVENTS_PATH), data=body, headers=all_headers
        ) as response:
            return response.status, await response.text()

    async def event(
        self, event: dict[str, Any], *, event_id: str | None = None, retry_num: int | None = None
    ) -> int:
        """Deliver an Events API callback; returns the HTTP status."""
        body = json.dumps(
            {
                "token": "x",
                "team_id": self.mock.team_id,
                "api_app_id": "A1",
                "type": "event_callback",
                "event": event,
                "event_id": event_id or f"Ev{next(self._ids):08d}",
                "event_time": int(time.time()),
            }
        )
        headers = (
            {"X-Slack-Retry-Num": str(retry_num), "X-Slack-Retry-Reason": "http_timeout"}
            if retry_num
            else None
        )
        status, _ = await self.post(body, headers=headers)
        return status

    @staticmethod
    def mention(
        text: str, *, ts: str, thread_ts: str | None = None, channel: str = "C1", user: str = "U1"
    ) -> dict[str, Any]:
        event = {
            "type": "app_mention",
            "text": f"<@UBOT> {text}",
            "user": user,
            "ts": ts,
            "channel": channel,
            "team": "T1",
            "event_ts": ts,
        }
        if thread_ts:
            event["thread_ts"] = thread_ts
        return event

    @staticmethod
    def message(
        text: str,
        *,
        ts: str,
        thread_ts: str | None = None,
        channel: str = "C1",
        user: str = "U1",
        channel_type: str = "channel",
        **extra: Any,
    ) -> dict[str, Any]:
        event = {
            "type": "message",
            "text": text,
            "user": user,
            "ts": ts,
            "channel": channel,
            "team": "T1",
            "channel_type": channel_type,
            "event_ts": ts,
            **extra,
        }
        if thread_ts:
            event["thread_ts"] = thread_ts
        return event

    async def interactive(self, payload: dict[str, Any]) -> int:
        status, _ = await self.post(
            urlencode({"payload": json.dumps(payload)}), content_type="application/x-www-form-urlencoded"
        )
        return status

    async def shortcut(
        self, callback_id: str, *, channel: str, message: dict[str, Any], user: str = "U1"
    ) -> int:
        """A message shortcut on message (which carries ts and, for replies, thread_ts)."""
        return await self.interactive(
            {
                "type": "message_action",
                "callback_id": callback_id,
                "trigger_id": f"trig{next(self._ids)}",
                "response_url": self.mock.response_url("shortcut"),
                "team": {"id": "T1", "domain": "test"},
                "user": {"id": user, "name": user.lower()},
                "channel": {"id": channel, "name": channel.lower()},
                "message_ts": message["ts"],
                "message": {"type": "message", **message},
                "action_ts": "1",
            }
        )

    async def action(
        self,
        action_id: str,
        value: str,
        *,
        channel: str = "C1",
        message_ts: str = "",
        thread_ts: str = "",
        user: str = "U1",
        view: dict[str, Any] | None = None,
        kind: str = "button",
        block_id: str = "b",
    ) -> int:
        """A block_actions click on a message element (kind "button" or "feedback_buttons"), or on a modal
        when view is given."""
        payload: dict[str, Any] = {
            "type": "block_actions",
            "trigger_id": f"trig{next(self._ids)}",
            "team": {"id": "T1"},
            "user": {"id": user},
            "response_url": self.mock.response_url("action"),
            "api_app_id": "A1",
            "actions": [
                {"action_id": action_id, "block_id": block_id, "value": value, "type": kind, "action_ts": "1"}
            ],
        }
        if view is not None:
            payload["container"] = {"type": "view", "view_id": view["id"]}
            payload["view"] = view
        else:
            payload["container"] = {
                "type": "message",
                "message_ts": message_ts,
                "channel_id": channel,
                "thread_ts": thread_ts,
                "is_ephemeral": False,
            }
            payload["channel"] = {"id": channel}
            payload["message"] = {"ts": message_ts, "thread_ts": thread_ts, "text": "x"}
        return await self.interactive(payload)

    async def command(self, text: str, *, channel: str = "C1", user: str = "U1") -> int:
        """The /kb slash command."""
        body = urlencode(
            {
                "token": "x",
                "team_id": "T1",
                "team_domain": "test",
                "channel_id": channel,
                "channel_name": "c",
                "user_id": user,
                "user_name": user.lower(),
                "command": "/kb",
                "text": text,
                "api_app_id": "A1",
                "response_url": self.mock.response_url("command"),
                "trigger_id": f"trig{next(self._ids)}",
            }
        )
        status, _ = await self.post(body, content_type="application/x-www-form-urlencoded")
        return status
