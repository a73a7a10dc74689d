"""The Slack bot: a Bolt AsyncApp wired to the pipeline, with its process lifetime (start, drain, shutdown)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.actions import ThreadActions
from adapters.slack.answering import Answerer, Placeholder
from adapters.slack.channel_config import ChannelConfig
from adapters.slack.dedup import RecentKeys
from adapters.slack.listeners import register_listeners
from adapters.slack.pipeline_port import AnswerPipeline
from adapters.slack.rate_budget import DEFAULT_LIMIT, UpdateBudget
from adapters.slack.render import record_lang
from adapters.slack.threads import EngagedThreads
from adapters.slack.triggers import BotIdentity
from core.budget import count_tokens

log = logging.getLogger(__name__)

DEFAULT_API_URL = "https://slack.com/api/"


@dataclass(frozen=True, slots=True)
class SlackOptions:
    """Throttling and lifetime knobs (defaults follow Slack's published limits)."""

    min_edit_interval: float = 1.0
    updates_per_minute: int = DEFAULT_LIMIT
    shutdown_grace: float = 20.0


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
            AsyncRateLimitErrorRetryHandler(max_retry_count=retries),
        ],
    )


class SlackBot:
    """Everything the listeners need, and the lifecycle around them."""

    def __init__(
        self,
        *,
        client: AsyncWebClient,
        pipeline: AnswerPipeline,
        channel_config: Callable[[str], ChannelConfig],
        signing_secret: str | None = None,
        socket_mode: bool = False,
        options: SlackOptions | None = None,
    ) -> None:
        self.options = options or SlackOptions()
        self.client = client
        self.pipeline = pipeline
        self.channel_config = channel_config
        self.identity: BotIdentity | None = None
        self.events_seen = RecentKeys()
        self.messages_seen = RecentKeys()
        self.budget = UpdateBudget(limit=self.options.updates_per_minute)
        self.engaged = EngagedThreads(pipeline.store)
        self.answerer = Answerer(
            client,
            pipeline,
            budget=self.budget,
            engaged=self.engaged,
            min_edit_interval=self.options.min_edit_interval,
        )
        self.thread_actions = ThreadActions(client, pipeline)
        self.closing = False
        self._tasks: set[asyncio.Task[None]] = set()
        self.app = AsyncApp(
            name="kb",  # without a name Bolt inspects the call stack (~0.15 s)
            client=client,
            signing_secret=signing_secret or "",
            request_verification_enabled=not socket_mode,
            url_verification_enabled=not socket_mode,
            process_before_response=False,
        )
        register_listeners(self.app, self)

    async def start(self) -> BotIdentity:
        """Check the token (auth.test), then recover answers a crash left pending. Call before serving."""
        response = await self.client.auth_test()
        self.identity = BotIdentity(
            team_id=str(response.get("team_id") or ""),
            user_id=str(response.get("user_id") or ""),
            bot_id=str(response.get("bot_id") or ""),
        )
        # The tokenizer loads on first use (~0.4 s of CPU): do it now, off the loop, not on the first question.
        await asyncio.to_thread(count_tokens, "warm up")
        await self.recover_interrupted()
        return self.identity

    async def recover_interrupted(self) -> int:
        """Mark records left pending as interrupted and edit their placeholders to say so."""
        records = await self.pipeline.interrupt_pending()
        placeholders = []
        for record in records:
            channel, _, ts = (record.reply_ref or "").partition(":")
            if channel and ts:
                placeholders.append(Placeholder(channel, ts, "", record_lang(record)))
        await self.answerer.mark_interrupted(placeholders)
        return len(placeholders)

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

    async def shutdown(self, *, grace: float | None = None) -> int:
        """Stop taking work, let in-flight answers finish for `grace` seconds, interrupt the rest.

        Interrupted answers are marked in the store (interrupt_pending) and their placeholders edited.
        Returns how many answers were interrupted.
        """
        self.closing = True
        if await self.wait_idle(self.options.shutdown_grace if grace is None else grace):
            return 0
        cut_short = {ph.ref: ph for task, ph in self.answerer.placeholders.items() if not task.done()}
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*list(self._tasks), return_exceptions=True)
        for record in await self.pipeline.interrupt_pending():
            channel, _, ts = (record.reply_ref or "").partition(":")
            if channel and ts:
                cut_short.setdefault(
                    record.reply_ref or "", Placeholder(channel, ts, "", record_lang(record))
                )
        await self.answerer.mark_interrupted(list(cut_short.values()))
        await self.answerer.drain_background()
        return len(cut_short)
