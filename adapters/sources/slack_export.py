"""A Slack workspace export (zip: channels.json, users.json, a folder of daily JSON files per channel) read as
the same thread documents a live sync makes (adapters.sources.slack_threads), with the same keys.

The zip is read in place, member by member with size limits (adapters.sources.export_zip). Links are built in chat.getPermalink's form when the workspace's address is given.
"""

from __future__ import annotations

import asyncio
import json
import zipfile
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from adapters.slack.inbound.user_names import display_name
from adapters.sources.export_zip import member_text, open_export
from adapters.sources.slack_threads import (
    is_root,
    permalink,
    thread_document,
    thread_version,
)
from core.errors import SourceUnreadable
from core.sources.models import Fetched, SyncedDocument


def _load(archive: zipfile.ZipFile, member: str) -> Any:
    try:
        return json.loads(member_text(archive, member))
    except ValueError as exc:
        raise SourceUnreadable(member, f"not JSON ({exc})") from exc


def _user_names(users: Any) -> dict[str, str]:
    """Each user's name by the live sync's rule, so an imported thread reads as the live one does."""
    named = ((str(user.get("id") or ""), display_name(user)) for user in users if isinstance(users, list))
    return {user_id: name for user_id, name in named if user_id and name}


def _bot_users(users: Any) -> frozenset[str]:
    return frozenset(
        str(u["id"]) for u in users if isinstance(users, list) and u.get("is_bot") and u.get("id")
    )


def read_export(
    path: Path, *, channels: frozenset[str] = frozenset(), workspace_url: str = ""
) -> list[SyncedDocument]:
    """Every thread of the export's public channels (or of the named ones) as a document (blocking)."""
    with open_export(path) as archive:
        members = set(archive.namelist())
        days_of: dict[str, list[str]] = defaultdict(list)  # channel folder -> its daily files
        for member in sorted(members):
            if member.endswith(".json"):
                days_of[PurePosixPath(member).parent.name].append(member)
        if "channels.json" not in members:
            raise SourceUnreadable(str(path), "not a Slack export (no channels.json)")
        listed = _load(archive, "channels.json")
        users = _load(archive, "users.json") if "users.json" in members else []
        names, bots = _user_names(users), _bot_users(users)
        documents: list[SyncedDocument] = []
        for channel in listed if isinstance(listed, list) else []:
            name, channel_id = str(channel.get("name") or ""), str(channel.get("id") or "")
            if (
                not name
                or not channel_id
                or (channels and name not in channels and channel_id not in channels)
            ):
                continue
            messages = [
                m for day in days_of.get(name, []) for m in _load(archive, day) if isinstance(m, dict)
            ]
            documents.extend(_threads(channel_id, name, messages, names, bots, workspace_url))
        return documents


def _threads(
    channel_id: str,
    name: str,
    messages: list[dict[str, Any]],
    names: Mapping[str, str],
    bots: frozenset[str],
    workspace_url: str,
) -> list[SyncedDocument]:
    threads: dict[str, list[dict[str, Any]]] = defaultdict(list)
    roots: dict[str, dict[str, Any]] = {}
    for message in messages:
        ts = str(message.get("ts") or "")
        if not ts:
            continue
        if is_root(message):
            roots[ts] = message
            threads[ts].insert(0, message)
        else:
            threads[str(message["thread_ts"])].append(message)
    documents = []
    for ts, thread in threads.items():
        root = roots.get(ts)
        if root is None:  # replies whose root lies outside the export
            continue
        link = permalink(workspace_url, channel_id, ts) if workspace_url else ""
        document = thread_document(
            channel_id, name, thread, names, link=link, version=thread_version(root), bot_user_ids=bots
        )
        if document is not None:
            documents.append(document)
    return documents


class SlackExportFetcher:
    """SourceFetcher over an export zip: every thread, every time (an export is read whole)."""

    def __init__(
        self, path: Path, *, channels: frozenset[str] = frozenset(), workspace_url: str = ""
    ) -> None:
        self.path, self.channels, self.workspace_url = path, channels, workspace_url

    async def fetch(self, known: Mapping[str, str]) -> Fetched:
        documents = await asyncio.to_thread(
            read_export, self.path, channels=self.channels, workspace_url=self.workspace_url
        )
        return Fetched(tuple(documents))
