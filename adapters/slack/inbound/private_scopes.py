"""Which datasets a question may search when some hold a private channel's threads (a synced source): such a
dataset only in that channel itself, or in a DM with one of its members (adapters.slack.inbound.access.can_user_see, cached).

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
from adapters.slack.inbound.access import can_user_see
from core.models import ConversationScope

PrivateDatasets = Callable[[], Awaitable[Mapping[str, str]]]  # dataset -> the private channel it belongs to
MEMBERS_TTL = 300.0  # seconds a membership answer is trusted
MAX_CACHED = 5000


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
        self._members: dict[tuple[str, str], tuple[float, bool]] = {}

    async def is_member(self, channel_id: str, user_id: str) -> bool:
        """Whether the person is in the channel (access.can_user_see, cached MEMBERS_TTL); False when Slack
        cannot say."""
        cached = self._members.get((channel_id, user_id))
        if cached is not None and self.clock() - cached[0] < MEMBERS_TTL:
            return cached[1]
        try:
            member = await can_user_see(self.client, user_id=user_id, channel_id=channel_id)
        except CALL_ERRORS:
            return False  # not cached: asked again next time
        if len(self._members) >= MAX_CACHED:
            self._members.clear()
        self._members[(channel_id, user_id)] = (self.clock(), member)
        return member

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
                if channel is not None and await self.is_member(channel, user_id):
                    member_of.add(channel)
        return visible(datasets, private, channel_id=channel_id, member_of=frozenset(member_of))

    async def scope(
        self, scope: ConversationScope, *, channel_id: str, user_id: str, is_dm: bool
    ) -> ConversationScope:
        """The scope with the datasets this person may not search here taken out."""
        allowed = await self.datasets(scope.datasets, channel_id=channel_id, user_id=user_id, is_dm=is_dm)
        return scope if allowed == tuple(scope.datasets) else replace(scope, datasets=allowed)
