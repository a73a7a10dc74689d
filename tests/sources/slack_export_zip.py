"""A Slack workspace export zip made in the test: channels.json, users.json and daily JSON files per channel,
in the layout Slack's export has."""

from __future__ import annotations

import json
import zipfile
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

USERS = [
    {"id": "U1", "name": "alice", "real_name": "Alice Chen", "profile": {"display_name": "alice"}},
    {"id": "U2", "name": "bob", "real_name": "Bob Li", "profile": {"display_name": "bob"}},
    {"id": "UB", "name": "kbbot", "is_bot": True, "profile": {"display_name": "KB"}},
]


def message(user: str, ts: str, text: str, *, thread_ts: str | None = None, **extra: Any) -> dict[str, Any]:
    """One message as an export stores it."""
    shown: dict[str, Any] = {"type": "message", "user": user, "ts": ts, "text": text, **extra}
    if thread_ts:
        shown["thread_ts"] = thread_ts
    return shown


def threaded(root: dict[str, Any], replies: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """A root with its replies: the root carries thread_ts, reply_count and latest_reply as Slack's do."""
    if replies:
        root = {
            **root,
            "thread_ts": root["ts"],
            "reply_count": len(replies),
            "latest_reply": replies[-1]["ts"],
        }
    return [root, *({**reply, "thread_ts": root["ts"]} for reply in replies)]


def write_export(path: Path, channels: dict[tuple[str, str], list[dict[str, Any]]]) -> Path:
    """channels: (id, name) -> messages; written as one JSON file per day per channel folder."""
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("users.json", json.dumps(USERS))
        archive.writestr(
            "channels.json",
            json.dumps([{"id": cid, "name": name, "is_private": False} for cid, name in channels]),
        )
        for (_, name), messages in channels.items():
            days: dict[str, list[dict[str, Any]]] = defaultdict(list)
            for shown in messages:
                day = datetime.fromtimestamp(float(shown["ts"]), tz=UTC).strftime("%Y-%m-%d")
                days[day].append(shown)
            for day, held in days.items():
                archive.writestr(f"{name}/{day}.json", json.dumps(held))
    return path
