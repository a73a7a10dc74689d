"""Can this user see that conversation? Checked with the bot's token, since a bot cannot act as the user.

A permalink pasted into `/kb trace|compact` may point anywhere. Slack gives a bot no "could user U read
channel C" call, so the check is conservative and uses what the bot itself can see:
- a DM (`is_im`): only the person the bot is talking with (`conversations.info` -> `user`);
- a channel, private channel or group DM: the user must be a current member (`conversations.members`,
  paged). Public channels are treated the same: a non-member is refused (they can join and retry),
  because guests cannot read every public channel and the bot cannot tell them apart without more scopes;
- anything the bot cannot inspect (not a member itself, archived, another workspace, API error) is
  refused. Failing closed never leaks a trace; the cost is an occasional "join the channel first".
"""

from __future__ import annotations

import logging

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.delivery.slack_errors import error_code

log = logging.getLogger(__name__)

MAX_MEMBER_PAGES = 50


async def can_user_see(client: AsyncWebClient, *, user_id: str, channel_id: str) -> bool:
    """True only when the bot can confirm that user_id can read channel_id."""
    try:
        info = await client.conversations_info(channel=channel_id)
        channel = info.get("channel") or {}
        if channel.get("is_im"):
            return bool(channel.get("user") == user_id)
        if channel.get("is_archived"):
            return False
        cursor: str | None = None
        for _ in range(MAX_MEMBER_PAGES):
            page = await client.conversations_members(channel=channel_id, cursor=cursor, limit=1000)
            if user_id in (page.get("members") or []):
                return True
            cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
            if not cursor:
                return False
    except SlackApiError as exc:
        log.info("access check for %s in %s failed: %s", user_id, channel_id, error_code(exc))
    return False
