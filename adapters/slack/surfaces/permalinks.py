"""Slack message permalinks parsed into channel + thread (pure)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from adapters.slack.inbound.plain_text import to_plain_text

_PATH = re.compile(r"/archives/([CDG][A-Z0-9]+)/p(\d{7,})(?:/|$)")
_URL = re.compile(r"https?://\S+")


@dataclass(frozen=True, slots=True)
class MessageLink:
    """A message in a channel, and the root of its thread (the message itself for a root)."""

    channel_id: str
    message_ts: str
    thread_ts: str
    host: str = ""


def _ts(digits: str) -> str:
    return f"{digits[:10]}.{digits[10:]}" if len(digits) > 10 else digits


def parse_permalink(text: str) -> MessageLink | None:
    """The first Slack permalink in text (raw or in Slack markup), or None.

    https://team.slack.com/archives/C1H9RESGA/p1358546515000008 -> C1H9RESGA, ts 1358546515.000008;
    a reply's `?thread_ts=...&cid=...` names its thread root.
    """
    for candidate in _URL.findall(to_plain_text(text)):
        url = urlsplit(candidate.rstrip(").,>"))
        match = _PATH.search(url.path)
        if not match:
            continue
        channel, message_ts = match.group(1), _ts(match.group(2))
        query = parse_qs(url.query)
        thread_ts = (query.get("thread_ts") or [message_ts])[0]
        if not re.fullmatch(r"\d+\.\d+", thread_ts):
            thread_ts = message_ts
        return MessageLink(
            channel_id=channel, message_ts=message_ts, thread_ts=thread_ts, host=url.hostname or ""
        )
    return None
