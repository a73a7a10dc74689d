"""Slack messages to thread documents (pure): one document per thread, root plus replies, speakers by
display name, bots left out; the same key, title and text whether read live or from an export."""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Any

from adapters.slack.inbound.plain_text import mentioned_user_ids, to_plain_text
from core.sources.models import SyncedDocument

# Messages people wrote (a reply also sent to the channel, a shared file's comment, /me); joins, topic
# changes, bot posts and deleted-message tombstones are not knowledge.
HUMAN_SUBTYPES = frozenset({"", "thread_broadcast", "file_share", "me_message"})
TITLE_CHARS = 80


def thread_key(channel_id: str, thread_ts: str) -> str:
    """The stable key of a thread: its channel and the root's ts."""
    return f"slack:{channel_id}/{thread_ts}"


def permalink(workspace_url: str, channel_id: str, ts: str) -> str:
    """A message's permalink in the form chat.getPermalink gives for a root message."""
    return f"{workspace_url.rstrip('/')}/archives/{channel_id}/p{ts.replace('.', '')}"


def is_root(message: Mapping[str, Any]) -> bool:
    """A channel-level message: no thread, or the root of one (a broadcast reply is not a root)."""
    thread_ts = message.get("thread_ts")
    return not thread_ts or thread_ts == message.get("ts")


def is_human(message: Mapping[str, Any], *, bot_user_ids: frozenset[str] = frozenset()) -> bool:
    """Written by a person: not a bot (any bot_id, or one of bot_user_ids) and of a kind people write."""
    if message.get("bot_id") or message.get("user") in bot_user_ids or not message.get("user"):
        return False
    return str(message.get("subtype") or "") in HUMAN_SUBTYPES


def thread_version(root: Mapping[str, Any]) -> str:
    """What changes when a thread does, as the channel history shows its root: replies, last reply, edit."""
    edited = (root.get("edited") or {}).get("ts", "")
    return f"{root.get('reply_count', 0)}|{root.get('latest_reply', '')}|{edited}"


def last_activity(root: Mapping[str, Any]) -> float:
    """When the thread last changed as far as its root tells (its last reply, edit or itself)."""
    times = [root.get("ts"), root.get("latest_reply"), (root.get("edited") or {}).get("ts")]
    return max(float(value) for value in times if value)


def mentioned_ids(messages: Sequence[Mapping[str, Any]]) -> set[str]:
    """Every user id a thread needs a name for: speakers and mentioned people."""
    ids = {str(message.get("user")) for message in messages if message.get("user")}
    for message in messages:
        ids.update(mentioned_user_ids(str(message.get("text") or "")))
    return ids


def _when(ts: str) -> str:
    moment = datetime.datetime.fromtimestamp(float(ts), tz=datetime.UTC)
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def thread_document(
    channel_id: str,
    channel_name: str,
    messages: Sequence[Mapping[str, Any]],
    names: Mapping[str, str],
    *,
    link: str = "",
    version: str = "",
    bot_user_ids: frozenset[str] = frozenset(),
) -> SyncedDocument | None:
    """The thread (its root first) as a document; None when no person wrote anything in it."""
    root_ts = str(messages[0].get("ts")) if messages else ""
    lines: list[str] = []
    first_text = ""
    for message in sorted(messages, key=lambda m: float(m.get("ts") or 0)):
        if not is_human(message, bot_user_ids=bot_user_ids):
            continue
        text = to_plain_text(str(message.get("text") or ""), user_names=names)
        if not text:
            continue
        speaker = names.get(str(message.get("user")), "") or str(message.get("user"))
        first_text = first_text or text
        lines.append(f"**{speaker}** ({_when(str(message.get('ts')))}):\n{text}")
    if not lines:
        return None
    opening = " ".join(first_text.split())
    if len(opening) > TITLE_CHARS:
        opening = opening[: TITLE_CHARS - 1].rstrip() + "…"
    title = f"#{channel_name}: {opening}"
    markdown = f"# {title}\n\n" + "\n\n".join(lines)
    return SyncedDocument(
        key=thread_key(channel_id, root_ts), title=title, markdown=markdown, link=link, version=version
    )
