"""A Slack channel, read live through slack_sdk: conversations.history for the threads, conversations.replies
for the changed ones, chat.getPermalink for their links, users.info for speakers' names.

Cursor pagination as the Web API documents it; 429s are retried after Retry-After by slack_sdk's
AsyncRateLimitErrorRetryHandler (adapters.slack.app.build_web_client); on top of that, history and replies
(Tier 3 for internal apps, about 50 a minute) are paced below their tier (the delivery's ChannelPacer,
one bucket per method) so a large channel does not
spend the workspace's budget the answers need. The history is listed whole on every sync (a deleted
thread is known only by its absence); replies are read again only for threads whose root shows a change
or whose last activity is recent (an edited reply leaves no trace on the root), see docs/sources.md.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.delivery.channel_pacer import ChannelPacer
from adapters.slack.delivery.slack_errors import error_code
from adapters.slack.inbound.user_names import UserNames
from adapters.sources.slack_threads import (
    is_root,
    last_activity,
    mentioned_ids,
    thread_document,
    thread_key,
    thread_version,
)
from core.errors import SourceUnreadable
from core.sources.models import Fetched, SyncedDocument

TIER3_PER_MINUTE = 50
PAGE_SIZE = 200
RECHECK_DAYS = 7.0
PRIVATE = (
    "a private channel is synced only with --set private=true, which keeps its dataset to that channel "
    "(give it a dataset of its own)"
)


class SlackChannelFetcher:
    """SourceFetcher for one channel the bot is in."""

    def __init__(
        self,
        client: AsyncWebClient,
        channel_id: str,
        *,
        per_minute: float = TIER3_PER_MINUTE,
        recheck_days: float = RECHECK_DAYS,
        now: Callable[[], float] = time.time,
        private: bool = False,
    ) -> None:
        self.client = client
        self.channel_id = channel_id
        # history and replies each have their own Tier 3 budget: one bucket per method (burst 1)
        self.pacer = ChannelPacer(rate=per_minute / 60.0, burst=1) if per_minute > 0 else None
        self.recheck = recheck_days * 86400.0
        self.now = now
        self.names = UserNames(client)
        self.private = private  # the source is marked private: its dataset stays in the channel

    async def fetch(self, known: Mapping[str, str]) -> Fetched:
        try:
            return await self._fetch(known)
        except SlackApiError as exc:
            raise SourceUnreadable(f"#{self.channel_id}", error_code(exc)) from exc
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise SourceUnreadable(
                f"#{self.channel_id}", f"Slack could not be reached ({type(exc).__name__})"
            ) from exc

    async def _fetch(self, known: Mapping[str, str]) -> Fetched:
        channel = (await self.client.conversations_info(channel=self.channel_id)).get("channel") or {}
        if channel.get("is_im") or channel.get("is_mpim"):
            raise SourceUnreadable(f"#{self.channel_id}", "a direct message is not a knowledge source")
        if channel.get("is_private") and not self.private:
            raise SourceUnreadable(f"#{channel.get('name') or self.channel_id}", PRIVATE)
        name = str(channel.get("name") or self.channel_id)
        bots = frozenset({str((await self.client.auth_test()).get("user_id") or "")})
        documents: list[SyncedDocument] = []
        kept: set[str] = set()
        for root in await self._roots():
            key, version = thread_key(self.channel_id, str(root["ts"])), thread_version(root)
            recent = self.now() - last_activity(root) < self.recheck
            if known.get(key) == version and not recent:
                kept.add(key)
                continue
            messages = await self._thread(root)
            names = {user: await self.names.name(user) for user in mentioned_ids(messages)}
            document = thread_document(
                self.channel_id, name, messages, names, version=version, bot_user_ids=bots
            )
            if document is None:
                continue
            link = await self.client.chat_getPermalink(channel=self.channel_id, message_ts=root["ts"])
            documents.append(_linked(document, str(link.get("permalink") or "")))
        return Fetched(tuple(documents), frozenset(kept))

    def _paced(self, method: str) -> AbstractAsyncContextManager[None]:
        """A turn of method's budget (nothing to wait for when unpaced)."""
        return self.pacer.turn(method) if self.pacer is not None else contextlib.nullcontext()

    async def _roots(self) -> list[dict[str, Any]]:
        roots: list[dict[str, Any]] = []
        cursor = None
        while True:
            async with self._paced("conversations.history"):
                page = await self.client.conversations_history(
                    channel=self.channel_id, limit=PAGE_SIZE, cursor=cursor
                )
            roots.extend(m for m in page.get("messages") or [] if m.get("ts") and is_root(m))
            cursor = (page.get("response_metadata") or {}).get("next_cursor")
            if not cursor:
                return roots

    async def _thread(self, root: dict[str, Any]) -> list[dict[str, Any]]:
        if not root.get("reply_count"):
            return [root]
        messages: list[dict[str, Any]] = []
        cursor = None
        while True:
            async with self._paced("conversations.replies"):
                page = await self.client.conversations_replies(
                    channel=self.channel_id, ts=root["ts"], limit=PAGE_SIZE, cursor=cursor
                )
            messages.extend(page.get("messages") or [])
            cursor = (page.get("response_metadata") or {}).get("next_cursor")
            if not cursor:
                break
        if not any(m.get("ts") == root["ts"] for m in messages):
            messages.insert(0, root)
        return messages


def _linked(document: SyncedDocument, link: str) -> SyncedDocument:
    return SyncedDocument(document.key, document.title, document.markdown, link, document.version)
