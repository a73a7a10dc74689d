"""Display names for mentioned users (users.info, cached), so "<@U123>" reads as "@alice" in questions."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.delivery.slack_errors import error_code
from adapters.slack.inbound.triggers import IncomingMessage

log = logging.getLogger(__name__)

MAX_CACHED = 5000
_SPACES = re.compile(r"[ \t]+")


def display_name(user: Mapping[str, Any]) -> str:
    """The name Slack shows for a user object (users.info, an export's users.json): display name, else real
    name, else handle; "" for none."""
    profile = user.get("profile") or {}
    return str(profile.get("display_name") or user.get("real_name") or user.get("name") or "")


class UserNames:
    """users.info lookups with a cache; a failed lookup simply leaves the mention out."""

    def __init__(self, client: AsyncWebClient) -> None:
        self.client = client
        self._names: dict[str, str] = {}

    async def name(self, user_id: str) -> str:
        """The user's display name, or "" when it cannot be read."""
        if user_id in self._names:
            return self._names[user_id]
        name = ""
        try:
            response = await self.client.users_info(user=user_id)
            name = display_name(response.get("user") or {})
        except SlackApiError as exc:
            log.debug("users.info %s failed: %s", user_id, error_code(exc))
        if len(self._names) >= MAX_CACHED:
            self._names.clear()
        self._names[user_id] = name
        return name

    async def resolve(self, message: IncomingMessage) -> str:
        """The message's plain text with other users' "@U123" mentions as "@name" (left out when unknown)."""
        if not message.mentioned:
            return message.text
        text = message.text
        for user_id in message.mentioned:
            name = await self.name(user_id)
            text = text.replace(f"@{user_id}", f"@{name.lstrip('@')}" if name else "")
        return "\n".join(_SPACES.sub(" ", line).strip() for line in text.splitlines()).strip()
