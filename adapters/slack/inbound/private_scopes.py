"""Which datasets a question may search when some hold a private channel's threads (a synced source): such a
dataset only in that channel itself, or in a DM with one of its members (conversations.members, cached).

Everything that shows a dataset's content in Slack asks here first: the question's scope (fixed with the
conversation at its first question), the assistant pane's suggested prompts. A member list that cannot be
read counts as empty: the private dataset stays hidden (fail closed).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace

from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.delivery.slack_errors import CALL_ERRORS
from core.models import ConversationScope

PrivateDatasets = Callable[[], Awaitable[Mapping[str, str]]]  # dataset -> the private channel it belongs to
MEMBERS_TTL = 300.0  # seconds a channel's member list is trusted


def visible(
    datasets: Sequence[str], private: Mapping[str, str], *, channel_id: str, member_of: frozenset[str]
) -> tuple[str, ...]:
    """The datasets a question asked in channel_id may search: the public ones, and a private one in its
    own channel or when the asker is a member of that channel (member_of: the asker's private channels)."""
    return tuple(
        d for d in datasets if d not in private or private[d] == channel_id or private[d] in member_of
    )


class PrivateScopes:
    """visible() with the private datasets read from the registry and members from Slack."""

    def __init__(
        self,
        client: AsyncWebClient,
        private: PrivateDatasets,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.private = private
        self.clock = clock
        self._members: dict[str, tuple[float, frozenset[str]]] = {}

    async def members(self, channel_id: str) -> frozenset[str]:
        """The channel's members (paginated, cached MEMBERS_TTL); empty when Slack cannot say."""
        cached = self._members.get(channel_id)
        if cached is not None and self.clock() - cached[0] < MEMBERS_TTL:
            return cached[1]
        found: set[str] = set()
        cursor = None
        try:
            while True:
                page = await self.client.conversations_members(channel=channel_id, cursor=cursor, limit=200)
                found.update(str(member) for member in page.get("members") or [])
                cursor = (page.get("response_metadata") or {}).get("next_cursor")
                if not cursor:
                    break
        except CALL_ERRORS:
            return frozenset()  # not cached: asked again next time
        members = frozenset(found)
        self._members[channel_id] = (self.clock(), members)
        return members

    async def datasets(
        self, datasets: Sequence[str], *, channel_id: str, user_id: str, is_dm: bool
    ) -> tuple[str, ...]:
        """The datasets of `datasets` this person may search here."""
        private = await self.private()
        if not any(dataset in private for dataset in datasets):
            return tuple(datasets)
        member_of: set[str] = set()
        if is_dm and user_id:
            for dataset in datasets:
                channel = private.get(dataset)
                if channel is not None and user_id in await self.members(channel):
                    member_of.add(channel)
        return visible(datasets, private, channel_id=channel_id, member_of=frozenset(member_of))

    async def scope(
        self, scope: ConversationScope, *, channel_id: str, user_id: str, is_dm: bool
    ) -> ConversationScope:
        """The scope with the datasets this person may not search here taken out."""
        allowed = await self.datasets(scope.datasets, channel_id=channel_id, user_id=user_id, is_dm=is_dm)
        return scope if allowed == tuple(scope.datasets) else replace(scope, datasets=allowed)
