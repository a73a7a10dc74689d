"""The Slack bot's process lifetime: start (auth.test, recovery), periodic sweeps, work after the ack, shutdown.

Its parts are built by the composition root (bot/compose) and handed over whole: this module wires nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from adapters.observability.metrics import SLACK_RATE_LIMITED
from adapters.slack.answering import Answerer
from adapters.slack.delivery.ledger import DeliveryLedger, Tracked
from adapters.slack.delivery.outbox import OutboxOptions
from adapters.slack.delivery.update_budget import DEFAULT_LIMIT
from adapters.slack.inbound.channel_config import ChannelConfig
from adapters.slack.inbound.intake import EngagedThreads, Intake
from adapters.slack.inbound.triggers import BotIdentity
from adapters.slack.pipeline_port import AnswerPipeline, SlackReads
from adapters.slack.reply.streaming_support import StreamingMode
from adapters.slack.surfaces.assistant_pane import AssistantPane
from adapters.slack.surfaces.home_publisher import HomeTab
from adapters.slack.surfaces.thread_actions import ThreadActions
from core.budget import count_tokens
from core.models import RecordStatus

log = logging.getLogger(__name__)

DEFAULT_API_URL = "https://slack.com/api/"


@dataclass(frozen=True, slots=True)
class SlackOptions:
    """Throttling, delivery and lifetime knobs (defaults follow Slack's published limits)."""

    min_edit_interval: float = 1.0
    updates_per_minute: int = DEFAULT_LIMIT
    shutdown_grace: float = 20.0
    delivery: OutboxOptions = field(default_factory=OutboxOptions)
    sweep_interval: float = 15.0  # how often each instance sweeps orphans and re-delivers
    delivery_settle: float = 5.0  # a finished record is left to its own instance this long first
    resume_interrupted: bool = True  # answer interrupted questions again (once) instead of "please ask again"
    event_claims_ttl: float = 86400.0  # how long event ids and message keys are remembered
    streaming: StreamingMode = "auto"  # KB_SLACK_STREAMING: native streaming where the workspace allows it
    stream_interval: float = 0.5  # seconds between appends to one streamed answer
    appends_per_minute: int = 90  # chat.appendStream budget for the workspace (Tier 4, 100+ per minute)


class CountingRateLimitHandler(AsyncRateLimitErrorRetryHandler):
    """slack_sdk's 429 retry (Retry-After honoured), counting every 429 answer by method for /metrics."""

    async def can_retry_async(self, **kwargs: Any) -> bool:
        response = kwargs.get("response")
        if response is not None and response.status_code == 429:
            method = str(getattr(kwargs.get("request"), "url", "")).rstrip("/").rsplit("/", 1)[-1]
            SLACK_RATE_LIMITED.labels(method=method or "unknown").inc()
        return await super().can_retry_async(**kwargs)


def build_web_client(
    token: str | None, *, base_url: str | None = None, retries: int = 3, session: Any = None
) -> AsyncWebClient:
    """An AsyncWebClient that retries connection errors and honours 429 Retry-After."""
    return AsyncWebClient(
        token=token,
        base_url=base_url or DEFAULT_API_URL,
        session=session,
        retry_handlers=[
            AsyncConnectionErrorRetryHandler(),
            CountingRateLimitHandler(max_retry_count=retries),
        ],
    )


def delivery_client(client: AsyncWebClient) -> AsyncWebClient:
    """The same workspace client without slack_sdk's in-call 429 retries: the outbox reads Retry-After
    itself, so a rate-limited channel keeps its order and a record knows what happened to it."""
    return AsyncWebClient(
        token=client.token,
        base_url=client.base_url,
        session=client.session,
        timeout=client.timeout,
        retry_handlers=[AsyncConnectionErrorRetryHandler()],
    )


@dataclass
class SlackParts:
    """Everything the listeners and the lifecycle use, built once by the composition root."""

    app: AsyncApp
    client: AsyncWebClient
    pipeline: AnswerPipeline
    reads: SlackReads
    ledger: DeliveryLedger
    channel_config: Callable[[str], ChannelConfig]
    intake: Intake
    answerer: Answerer
    engaged: EngagedThreads
    thread_actions: ThreadActions
    pane: AssistantPane
    home: HomeTab
    options: SlackOptions


class SlackBot:
    """The running bot: what arrives is acted on after the ack, tracked so shutdown can finish it."""

    def __init__(self, parts: SlackParts) -> None:
        self.parts = parts
        self.app = parts.app
        self.client = parts.client
        self.options = parts.options
        self.channel_config = parts.channel_config
        self.intake = parts.intake
        self.answerer = parts.answerer
        self.thread_actions = parts.thread_actions
        self.pane = parts.pane
        self.home = parts.home
        self.identity: BotIdentity | None = None
        self.closing = False
        self._tasks: set[asyncio.Task[None]] = set()
        self._maintenance: asyncio.Task[None] | None = None
        self._last_prune = 0.0

    async def start(self, *, maintain: bool = True) -> BotIdentity:
        """Check the token (auth.test), recover answers a crash left pending, start the periodic sweep and
        re-delivery. Call before serving."""
        response = await self.client.auth_test()
        self.identity = BotIdentity(
            team_id=str(response.get("team_id") or ""),
            user_id=str(response.get("user_id") or ""),
            bot_id=str(response.get("bot_id") or ""),
        )
        self.answerer.lost.known_as(self.identity.user_id, self.identity.bot_id)
        # The tokenizer loads on first use (~0.4 s of CPU): do it now, off the loop, not on the first question.
        await asyncio.to_thread(count_tokens, "warm up")
        await self.recover_interrupted()
        if maintain and self._maintenance is None:
            self._maintenance = asyncio.create_task(self._maintain(), name="slack maintenance")
        return self.identity

    async def recover_interrupted(self) -> int:
        """Mark records left pending as interrupted and answer them again (or correct their replies)."""
        records = await self.parts.pipeline.interrupt_pending()
        await self.answerer.correct(records)
        return len(records)

    # ---------- periodic work
    async def maintain_once(self) -> None:
        """One round of the periodic work: sweep orphaned questions, re-deliver what is due, prune claims."""
        await self.answerer.correct(await self.parts.pipeline.sweep_orphans())
        now = time.time()
        options = self.options
        while not self.closing:
            due = await self.parts.ledger.take_due_deliveries(
                now, lease=options.delivery.lease, settle=options.delivery_settle
            )
            if not due:
                break
            await asyncio.gather(*(self.answerer.redeliver(tracked) for tracked in due))
        if now - self._last_prune > 3600:
            self._last_prune = now
            await self.parts.ledger.prune_events(now - options.event_claims_ttl)

    async def _maintain(self) -> None:
        while not self.closing:
            await asyncio.sleep(self.options.sweep_interval)
            try:
                await self.maintain_once()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("the periodic sweep failed; trying again later")

    def spawn(self, coroutine: Coroutine[Any, Any, None], *, name: str = "") -> asyncio.Task[None]:
        """Run work after the ack, tracked so shutdown can finish or interrupt it."""
        task = asyncio.create_task(self._guard(coroutine), name=name or None)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    @staticmethod
    async def _guard(coroutine: Coroutine[Any, Any, None]) -> None:
        try:
            await coroutine
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("a Slack handler failed")

    # ---------- the end
    async def wait_idle(self, within: float | None = None) -> bool:
        """Wait until no work is in flight; False if `within` seconds passed first."""
        loop = asyncio.get_running_loop()
        deadline = None if within is None else loop.time() + within
        while self._tasks:
            remaining = None if deadline is None else deadline - loop.time()
            if remaining is not None and remaining <= 0:
                return False
            await asyncio.wait(list(self._tasks), timeout=remaining)
        await self.answerer.drain_background()
        return True

    async def stop_maintenance(self) -> None:
        task, self._maintenance = self._maintenance, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def shutdown(self, *, grace: float | None = None) -> int:
        """Stop taking work, let in-flight answers finish for `grace` seconds, interrupt the rest.

        Only this instance's own answers are interrupted (others sharing the database keep theirs): the
        pipeline marks each one interrupted as its task is cancelled. Those that will be answered again
        keep their reply as it is, due for the next start or another instance; the others' replies are
        corrected here. Returns how many.
        """
        self.closing = True
        await self.stop_maintenance()
        if await self.wait_idle(self.options.shutdown_grace if grace is None else grace):
            return 0
        cut_short = list(self.answerer.in_flight)
        for task in list(self._tasks):
            task.cancel()
        await self.answerer.stop_background()
        await asyncio.gather(*list(self._tasks), return_exceptions=True)
        interrupted = 0
        for record_id in cut_short:
            record = await self.parts.reads.get_record(record_id)
            delivery = await self.parts.ledger.read_delivery(record_id)
            if record is None or delivery is None or record.status != RecordStatus.INTERRUPTED:
                continue
            interrupted += 1
            tracked = Tracked(record, delivery)
            if self.answerer.resumable(tracked):
                await self.answerer.leave_for_later(tracked)
            else:
                await self.answerer.redeliver(tracked)
        await self.answerer.drain_background()
        return interrupted
