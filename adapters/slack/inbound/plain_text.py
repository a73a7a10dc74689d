"""Slack message markup to plain text: mentions, channel links, URLs and entities (pure)."""

from __future__ import annotations

import re
from collections.abc import Mapping

# <@U123>, <@U123|name>, <#C123|name>, <!here>, <!subteam^S1|@team>, <https://x|label>, <mailto:a@b|a@b>
_ANGLE = re.compile(r"<([^<>]*)>")
_USER_MENTION = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^<>]*)?>")
_SPACES = re.compile(r"[ \t]+")
_BLANK_LINES = re.compile(r"\n{3,}")


def mentioned_user_ids(text: str) -> list[str]:
    """User ids mentioned in a message, in order, without repeats."""
    return list(dict.fromkeys(_USER_MENTION.findall(text or "")))


def mentions_user(text: str, user_id: str) -> bool:
    """True when the message mentions this user (e.g. the bot)."""
    return bool(user_id) and user_id in mentioned_user_ids(text)


def _unescape(text: str) -> str:
    # Slack escapes exactly these three; &amp; last so "&amp;lt;" stays "&lt;".
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _special(body: str) -> str:
    """<!here>, <!channel>, <!everyone>, <!subteam^S1|@team>, <!date^...|fallback>."""
    name, _, label = body[1:].partition("|")
    if label:
        return label if label.startswith("@") or name.startswith("date") else f"@{label}"
    keyword = name.split("^", 1)[0]
    return f"@{keyword}" if keyword in {"here", "channel", "everyone"} else ""


def _link(body: str) -> str:
    target, _, label = body.partition("|")
    if target.startswith("mailto:"):
        return label or target.removeprefix("mailto:")
    if not label or label == target:
        return target
    return f"{label} ({target})"


def _replace(match: re.Match[str], *, bot_user_id: str, user_names: Mapping[str, str]) -> str:
    body = match.group(1)
    if body.startswith("@"):
        user_id, _, label = body[1:].partition("|")
        if user_id == bot_user_id:
            return ""
        name = label or user_names.get(user_id, "")
        return f"@{name.lstrip('@')}" if name else ""
    if body.startswith("#"):
        channel_id, _, label = body[1:].partition("|")
        return f"#{label or channel_id}"
    if body.startswith("!"):
        return _special(body)
    return _link(body)


def to_plain_text(text: str, *, bot_user_id: str = "", user_names: Mapping[str, str] | None = None) -> str:
    """The message as a person would read it: the bot mention removed, markup resolved, entities decoded.

    Other users' mentions become @name when a name is known (from `<@U|name>` or user_names) and are
    removed otherwise; channel links become #name; links become "label (url)" or the bare url.
    """
    names = user_names or {}
    resolved = _ANGLE.sub(lambda m: _replace(m, bot_user_id=bot_user_id, user_names=names), text or "")
    lines = [_SPACES.sub(" ", line).strip() for line in _unescape(resolved).splitlines()]
    return _BLANK_LINES.sub("\n\n", "\n".join(lines)).strip()
