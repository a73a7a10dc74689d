"""Publishing the App Home tab when someone opens it (app_home_opened → views.publish); workspace admins
(users.info: is_admin or is_owner) also see the top gaps."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence

from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.delivery.slack_errors import CALL_ERRORS
from adapters.slack.inbound.channel_config import ChannelConfig
from adapters.slack.inbound.intake import asker
from adapters.slack.pipeline_port import SlackReads
from adapters.slack.rendering.final_messages import record_lang
from adapters.slack.surfaces.catalogue import Catalogue
from adapters.slack.surfaces.home_view import RECENT_SHOWN, RecentQuestion, home_view
from core.errors import KbError
from core.insights.finder import GapReport
from core.insights.gaps import Gap
from core.record import Record
from core.sources.models import SourceState

log = logging.getLogger(__name__)


class HomeTab:
    """Builds one person's Home tab from the catalogue, the channel scopes and their recent records."""

    def __init__(
        self,
        client: AsyncWebClient,
        reads: SlackReads,
        *,
        catalogue: Catalogue,
        scopes: Mapping[str, ChannelConfig],
        channel_config: Callable[[str], ChannelConfig],
        sources: Callable[[], Awaitable[Sequence[SourceState]]] | None = None,
        gaps: Callable[[], Awaitable[GapReport]] | None = None,
    ) -> None:
        self.client = client
        self.reads = reads
        self.catalogue = catalogue
        self.scopes = scopes
        self.channel_config = channel_config
        self.sources = sources
        self.gaps = gaps

    async def _permalink(self, record: Record) -> str | None:
        """A link to the question's own message (its event key is "slack:team:channel:ts")."""
        parts = (record.event_key or "").split(":")
        if len(parts) != 4 or parts[0] != "slack":
            return None
        try:
            response = await self.client.chat_getPermalink(channel=parts[2], message_ts=parts[3])
        except CALL_ERRORS:
            return None
        permalink = response.get("permalink")
        return str(permalink) if permalink else None

    async def _sources(self) -> Sequence[SourceState]:
        """The synced sources with their last syncs; none when they cannot be read (the tab still shows)."""
        if self.sources is None:
            return ()
        try:
            return await self.sources()
        except KbError as exc:
            log.warning("the synced sources could not be read for the Home tab: %s", exc)
            return ()

    async def _is_admin(self, user_id: str) -> bool:
        """Whether Slack says the person administers the workspace (a failed lookup: no)."""
        try:
            response = await self.client.users_info(user=user_id)
        except CALL_ERRORS:
            return False
        user = response.get("user") or {}
        return bool(user.get("is_admin") or user.get("is_owner"))

    async def _gaps_for(self, user_id: str) -> Sequence[Gap] | None:
        """The top gaps for an admin; None for anyone else (or when they cannot be found)."""
        if self.gaps is None or not await self._is_admin(user_id):
            return None
        try:
            return (await self.gaps()).gaps
        except KbError as exc:
            log.warning("the gaps could not be found for the Home tab: %s", exc)
            return None

    async def publish(self, *, team_id: str, user_id: str) -> None:
        """views.publish the tab for this person (a refusal is logged: the tab keeps its last version)."""
        records = await self.reads.recent_questions(asker(team_id, user_id), limit=RECENT_SHOWN)
        links = await asyncio.gather(*(self._permalink(record) for record in records))
        scopes = {channel: self.channel_config(channel) for channel in self.scopes if channel != "default"}
        view = home_view(
            summaries=await self.catalogue.summaries(),
            scopes=scopes,
            default_scope=self.channel_config("default"),
            recent=[RecentQuestion(record, link) for record, link in zip(records, links, strict=True)],
            lang=record_lang(records[0]) if records else "en",
            sources=await self._sources(),
            gaps=await self._gaps_for(user_id),
        )
        try:
            await self.client.views_publish(user_id=user_id, view=view)
        except CALL_ERRORS as exc:
            log.warning("views.publish for %s failed: %s", user_id, exc)
