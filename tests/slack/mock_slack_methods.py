"""The Web API methods the mock Slack workspace answers (auth, chat, views, conversations, users)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any


@dataclass
class PostedMessage:
    """A message as the mock workspace holds it, with every version it had."""

    channel: str
    ts: str
    thread_ts: str | None
    text: str
    blocks: list[dict[str, Any]]
    versions: list[dict[str, Any]] = field(default_factory=list)
    deleted: bool = False

    def block_text(self) -> str:
        """All visible text of the current blocks, joined."""
        parts: list[str] = []
        for block in self.blocks:
            text = block.get("text")
            if isinstance(text, dict):
                parts.append(str(text.get("text", "")))
            for element in block.get("elements") or []:
                inner = element.get("text")
                parts.append(str(inner.get("text", "")) if isinstance(inner, dict) else str(inner or ""))
        return "\n".join(parts)


class SlackMethods:
    """Method handlers of MockSlackApi: each takes the request's parameters and returns the JSON reply."""

    team_id: str
    bot_user_id: str
    bot_id: str
    messages: dict[tuple[str, str], PostedMessage]
    ephemerals: list[dict[str, Any]]
    views: dict[str, dict[str, Any]]
    channels: dict[str, dict[str, Any]]
    members: dict[str, list[str]]
    user_names: dict[str, str]
    members_page_size: int
    port: int
    _ts: itertools.count[int]
    _ids: itertools.count[int]

    def thread(self, channel: str, thread_ts: str) -> list[PostedMessage]:
        """The bot's live replies in a thread, oldest first."""
        replies = [m for m in self.messages.values() if m.channel == channel and m.thread_ts == thread_ts]
        return sorted((m for m in replies if not m.deleted), key=lambda m: float(m.ts))

    def _next_ts(self) -> str:
        n = next(self._ts)
        return f"{1800000000 + n // 1_000_000}.{n % 1_000_000:06d}"

    def _auth_test(self, params: dict[str, Any]) -> dict[str, Any]:
        return {
            "ok": True,
            "team_id": self.team_id,
            "team": "Test",
            "user_id": self.bot_user_id,
            "bot_id": self.bot_id,
            "user": "kb",
            "url": "https://test.slack.com/",
        }

    def _apps_connections_open(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "url": f"ws://127.0.0.1:{self.port}/link"}

    def _chat_postMessage(self, params: dict[str, Any]) -> dict[str, Any]:
        ts, channel = self._next_ts(), str(params["channel"])
        message = PostedMessage(
            channel,
            ts,
            params.get("thread_ts"),
            str(params.get("text") or ""),
            list(params.get("blocks") or []),
        )
        message.versions.append({"text": message.text, "blocks": message.blocks})
        self.messages[(channel, ts)] = message
        return {"ok": True, "channel": channel, "ts": ts, "message": {"text": message.text, "ts": ts}}

    def _chat_update(self, params: dict[str, Any]) -> dict[str, Any]:
        message = self.messages.get((str(params["channel"]), str(params["ts"])))
        if message is None or message.deleted:
            return {"ok": False, "error": "message_not_found"}
        message.text = str(params.get("text") or message.text)
        if "blocks" in params:
            message.blocks = list(params["blocks"] or [])
        message.versions.append({"text": message.text, "blocks": message.blocks})
        return {"ok": True, "channel": message.channel, "ts": message.ts, "text": message.text}

    def _chat_delete(self, params: dict[str, Any]) -> dict[str, Any]:
        message = self.messages.get((str(params["channel"]), str(params["ts"])))
        if message is None:
            return {"ok": False, "error": "message_not_found"}
        message.deleted = True
        return {"ok": True, "channel": message.channel, "ts": message.ts}

    def _chat_postEphemeral(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, user = str(params["channel"]), str(params["user"])
        if channel in self.members and user not in self.members[channel]:
            return {"ok": False, "error": "user_not_in_channel"}
        self.ephemerals.append(params)
        return {"ok": True, "message_ts": self._next_ts()}

    def _chat_getPermalink(self, params: dict[str, Any]) -> dict[str, Any]:
        channel, ts = str(params["channel"]), str(params["message_ts"])
        return {
            "ok": True,
            "channel": channel,
            "permalink": f"https://test.slack.com/archives/{channel}/p{ts.replace('.', '')}",
        }

    def _views_open(self, params: dict[str, Any]) -> dict[str, Any]:
        if not params.get("trigger_id"):
            return {"ok": False, "error": "invalid_trigger_id"}
        view_id = f"V{next(self._ids):06d}"
        self.views[view_id] = {**params["view"], "id": view_id, "hash": f"h{next(self._ids)}"}
        return {"ok": True, "view": self.views[view_id]}

    _views_push = _views_open

    def _views_update(self, params: dict[str, Any]) -> dict[str, Any]:
        view_id = str(params.get("view_id") or "")
        if view_id not in self.views:
            return {"ok": False, "error": "not_found"}
        if params.get("hash") and params["hash"] != self.views[view_id]["hash"]:
            return {"ok": False, "error": "hash_conflict"}
        self.views[view_id] = {**params["view"], "id": view_id, "hash": f"h{next(self._ids)}"}
        return {"ok": True, "view": self.views[view_id]}

    def _conversations_info(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = self.channels.get(str(params.get("channel")))
        return {"ok": True, "channel": channel} if channel else {"ok": False, "error": "channel_not_found"}

    def _conversations_members(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = str(params.get("channel"))
        if channel not in self.members:
            return {"ok": False, "error": "channel_not_found"}
        start = int(params.get("cursor") or 0)
        end = start + self.members_page_size
        cursor = str(end) if end < len(self.members[channel]) else ""
        return {
            "ok": True,
            "members": self.members[channel][start:end],
            "response_metadata": {"next_cursor": cursor},
        }

    def _conversations_replies(self, params: dict[str, Any]) -> dict[str, Any]:
        replies = self.thread(str(params["channel"]), str(params["ts"]))
        return {
            "ok": True,
            "messages": [{"ts": m.ts, "text": m.text, "thread_ts": m.thread_ts} for m in replies],
        }

    def _users_info(self, params: dict[str, Any]) -> dict[str, Any]:
        user = str(params.get("user"))
        if user not in self.user_names:
            return {"ok": False, "error": "user_not_found"}
        return {
            "ok": True,
            "user": {"id": user, "name": user.lower(), "profile": {"display_name": self.user_names[user]}},
        }
