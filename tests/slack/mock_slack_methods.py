"""The Web API methods the mock Slack workspace answers (auth, chat and chat streaming, views and the Home
tab, assistant threads, conversations with a history people wrote, users)."""

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
    streamed: str = ""  # markdown text a chat stream appended (chat.update replaces it with its blocks)
    streaming: bool = False  # between chat.startStream and chat.stopStream (or the stream's expiry)
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)  # task_update chunks, latest per id
    task_history: list[dict[str, Any]] = field(default_factory=list)  # every task_update, in order
    task_display_mode: str | None = None
    recipient: tuple[str, str] | None = None  # (team, user) the stream was started for
    metadata: dict[str, Any] | None = None  # message metadata (event_type, event_payload), as Slack keeps it

    def block_text(self) -> str:
        """All visible text: the streamed markdown, then the current blocks, joined."""
        parts: list[str] = [self.streamed] if self.streamed else []
        for block in self.blocks:
            text = block.get("text")
            if isinstance(text, str):  # a markdown block
                parts.append(text)
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
    admins: set[str]
    members_page_size: int
    home_views: dict[str, dict[str, Any]]
    suggested_prompts: dict[tuple[str, str], dict[str, Any]]
    thread_titles: dict[tuple[str, str], str]
    port: int
    _ts: itertools.count[int]
    _ids: itertools.count[int]

    replies_page_size: int
    history: dict[str, list[dict[str, Any]]]  # channel -> messages people wrote (roots and replies)
    history_page_size: int

    # ---------- a channel's history, as people wrote it (conversations.history / .replies read it)
    def say(self, channel: str, user: str, text: str, *, thread_ts: str | None = None) -> str:
        """A person posts (a root, or a reply in thread_ts); returns its ts. The root's reply_count and
        latest_reply follow, as Slack keeps them."""
        ts = self._next_ts()
        message: dict[str, Any] = {"type": "message", "user": user, "text": text, "ts": ts}
        held = self.history.setdefault(channel, [])
        if thread_ts:
            message["thread_ts"] = thread_ts
            root = next(m for m in held if m["ts"] == thread_ts)
            root.update(thread_ts=thread_ts, reply_count=root.get("reply_count", 0) + 1, latest_reply=ts)
        held.append(message)
        return ts

    def edit(self, channel: str, ts: str, text: str) -> None:
        """A person edits a message: new text and an `edited` mark."""
        message = next(m for m in self.history[channel] if m["ts"] == ts)
        message.update(text=text, edited={"user": message["user"], "ts": self._next_ts()})

    def erase(self, channel: str, ts: str) -> None:
        """A person deletes a message (a root takes its replies with it)."""
        self.history[channel] = [
            m for m in self.history[channel] if m["ts"] != ts and m.get("thread_ts") != ts
        ]

    def _roots(self, channel: str) -> list[dict[str, Any]]:
        held = self.history.get(channel, [])
        return [m for m in held if m.get("thread_ts") in (None, m["ts"])]

    def _conversations_history(self, params: dict[str, Any]) -> dict[str, Any]:
        """The channel's roots, newest first, a page at a time (cursor: an offset)."""
        channel = str(params.get("channel"))
        if channel not in self.channels:
            return {"ok": False, "error": "channel_not_found"}
        roots = sorted(self._roots(channel), key=lambda m: float(m["ts"]), reverse=True)
        start = int(params.get("cursor") or 0)
        end = start + min(int(params.get("limit") or 100), self.history_page_size)
        cursor = str(end) if end < len(roots) else ""
        return {
            "ok": True,
            "messages": [dict(m) for m in roots[start:end]],
            "has_more": bool(cursor),
            "response_metadata": {"next_cursor": cursor},
        }

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
            metadata=params.get("metadata"),
        )
        message.versions.append({"text": message.text, "blocks": message.blocks})
        self.messages[(channel, ts)] = message
        return {"ok": True, "channel": channel, "ts": ts, "message": {"text": message.text, "ts": ts}}

    def _chat_update(self, params: dict[str, Any]) -> dict[str, Any]:
        message = self.messages.get((str(params["channel"]), str(params["ts"])))
        if message is None or message.deleted:
            return {"ok": False, "error": "message_not_found"}
        message.text = str(params.get("text") or message.text)
        if params.get("metadata") is not None:  # without it Slack keeps the message's metadata
            message.metadata = params["metadata"] or None
        if "blocks" in params:
            message.blocks = list(params["blocks"] or [])
            message.streamed, message.tasks, message.streaming = "", {}, False  # replaced wholesale
        message.versions.append({"text": message.text, "blocks": message.blocks})
        return {"ok": True, "channel": message.channel, "ts": message.ts, "text": message.text}

    # ---------- chat streaming
    def _apply_stream(self, message: PostedMessage, params: dict[str, Any]) -> None:
        """Fold a streaming call's markdown_text and chunks into the message, in order."""
        if params.get("markdown_text"):
            message.streamed += str(params["markdown_text"])
        for chunk in params.get("chunks") or []:
            kind = chunk.get("type")
            if kind == "markdown_text":
                message.streamed += str(chunk.get("text") or "")
            elif kind == "task_update":
                message.tasks[str(chunk["id"])] = dict(chunk)
                message.task_history.append(dict(chunk))
            elif kind == "blocks":
                message.blocks = [*message.blocks, *(chunk.get("blocks") or [])]
        message.versions.append(
            {"text": message.text, "blocks": message.blocks, "streamed": message.streamed}
        )

    def _chat_startStream(self, params: dict[str, Any]) -> dict[str, Any]:
        channel = str(params["channel"])
        if not params.get("thread_ts"):
            return {"ok": False, "error": "invalid_arguments"}
        if not channel.startswith("D"):  # "Required when streaming to channels"
            if not params.get("recipient_team_id"):
                return {"ok": False, "error": "missing_recipient_team_id"}
            if not params.get("recipient_user_id"):
                return {"ok": False, "error": "missing_recipient_user_id"}
        ts = self._next_ts()
        message = PostedMessage(channel, ts, str(params["thread_ts"]), "", [])
        message.streaming = True
        message.task_display_mode = params.get("task_display_mode")
        message.recipient = (
            str(params.get("recipient_team_id") or ""),
            str(params.get("recipient_user_id") or ""),
        )
        self.messages[(channel, ts)] = message
        self._apply_stream(message, params)
        return {"ok": True, "channel": channel, "ts": ts}

    def _streaming_message(self, params: dict[str, Any]) -> PostedMessage | dict[str, Any]:
        message = self.messages.get((str(params["channel"]), str(params["ts"])))
        if message is None or message.deleted:
            return {"ok": False, "error": "message_not_found"}
        if not message.streaming:
            return {"ok": False, "error": "message_not_in_streaming_state"}
        return message

    def _chat_appendStream(self, params: dict[str, Any]) -> dict[str, Any]:
        message = self._streaming_message(params)
        if isinstance(message, dict):
            return message
        self._apply_stream(message, params)
        return {"ok": True, "channel": message.channel, "ts": message.ts}

    def _chat_stopStream(self, params: dict[str, Any]) -> dict[str, Any]:
        message = self._streaming_message(params)
        if isinstance(message, dict):
            return message
        if params.get("blocks"):
            message.blocks = [*message.blocks, *params["blocks"]]
        if params.get("metadata"):
            message.metadata = params["metadata"]
        self._apply_stream(message, params)
        message.streaming = False
        message.text = message.streamed[:300]
        return {"ok": True, "channel": message.channel, "ts": message.ts, "message": {"ts": message.ts}}

    def expire_streams(self) -> None:
        """Slack closes streams after a few minutes: later appends and stops get message_not_in_streaming_state."""
        for message in self.messages.values():
            message.streaming = False

    # ---------- the Home tab and assistant threads
    def _views_publish(self, params: dict[str, Any]) -> dict[str, Any]:
        user = str(params.get("user_id") or "")
        if not user:
            return {"ok": False, "error": "invalid_arguments"}
        view = {**params["view"], "id": f"VH{next(self._ids):05d}", "hash": f"h{next(self._ids)}"}
        self.home_views[user] = view
        return {"ok": True, "view": view}

    def _assistant_threads_setSuggestedPrompts(self, params: dict[str, Any]) -> dict[str, Any]:
        prompts = params.get("prompts") or []
        if not prompts or len(prompts) > 4:
            return {"ok": False, "error": "invalid_arguments"}
        if any(not p.get("title") or not p.get("message") for p in prompts):
            return {"ok": False, "error": "invalid_arguments"}
        self.suggested_prompts[(str(params["channel_id"]), str(params.get("thread_ts") or ""))] = {
            "title": params.get("title"),
            "prompts": prompts,
        }
        return {"ok": True}

    def _assistant_threads_setTitle(self, params: dict[str, Any]) -> dict[str, Any]:
        if not params.get("title") or not params.get("thread_ts"):
            return {"ok": False, "error": "invalid_arguments"}
        self.thread_titles[(str(params["channel_id"]), str(params["thread_ts"]))] = str(params["title"])
        return {"ok": True}

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
        """The bot's replies in the thread, oldest first, a page at a time; each with its author (the bot)
        and, with include_all_metadata, its metadata."""
        said = [
            m
            for m in self.history.get(str(params["channel"]), [])
            if m["ts"] == str(params["ts"]) or m.get("thread_ts") == str(params["ts"])
        ]
        if said:
            return self._said_replies(said, params)
        replies = self.thread(str(params["channel"]), str(params["ts"]))
        with_metadata = str(params.get("include_all_metadata", "")).lower() in ("1", "true")
        start = int(params.get("cursor") or 0)
        end = start + min(int(params.get("limit") or 1000), self.replies_page_size)
        messages = []
        for m in replies[start:end]:
            shown: dict[str, Any] = {
                "type": "message",
                "ts": m.ts,
                "text": m.text,
                "thread_ts": m.thread_ts,
                "user": self.bot_user_id,
                "bot_id": self.bot_id,
            }
            if with_metadata and m.metadata:
                shown["metadata"] = m.metadata
            messages.append(shown)
        cursor = str(end) if end < len(replies) else ""
        return {
            "ok": True,
            "messages": messages,
            "has_more": bool(cursor),
            "response_metadata": {"next_cursor": cursor},
        }

    def _said_replies(self, said: list[dict[str, Any]], params: dict[str, Any]) -> dict[str, Any]:
        """A thread people wrote, root first, with the bot's replies in it, a page at a time."""
        channel, ts = str(params["channel"]), str(params["ts"])
        bots = [
            {
                "type": "message",
                "ts": m.ts,
                "text": m.text,
                "thread_ts": ts,
                "user": self.bot_user_id,
                "bot_id": self.bot_id,
            }
            for m in self.thread(channel, ts)
        ]
        everything = sorted([*(dict(m) for m in said), *bots], key=lambda m: float(m["ts"]))
        start = int(params.get("cursor") or 0)
        end = start + min(int(params.get("limit") or 1000), self.replies_page_size)
        cursor = str(end) if end < len(everything) else ""
        return {
            "ok": True,
            "messages": everything[start:end],
            "has_more": bool(cursor),
            "response_metadata": {"next_cursor": cursor},
        }

    def _users_info(self, params: dict[str, Any]) -> dict[str, Any]:
        user = str(params.get("user"))
        if user not in self.user_names and user not in self.admins:
            return {"ok": False, "error": "user_not_found"}
        name = self.user_names.get(user, user.lower())
        return {
            "ok": True,
            "user": {
                "id": user,
                "name": user.lower(),
                "is_admin": user in self.admins,
                "profile": {"display_name": name},
            },
        }
