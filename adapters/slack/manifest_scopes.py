"""The bot token scopes manifest.yml asks for (tests/slack/test_manifest.py keeps the two equal)."""

from __future__ import annotations

BOT_SCOPES = (
    "app_mentions:read",
    "chat:write",
    "channels:history",
    "groups:history",
    "im:history",
    "mpim:history",
    "commands",
    "assistant:write",
    "channels:read",
    "groups:read",
    "im:read",
    "mpim:read",
    "users:read",
)
