"""Synced sources wired: the fetcher for each kind, the mirror folder, one sync run end to end (fetch,
ingest, remove) for `kb sources sync`, and the schedule `kb serve` runs."""

from __future__ import annotations

import asyncio
import functools
import os
import socket
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adapters.knowledge.document_readers import ReadLimits, UnreadableDocument, content_hash, read_document
from adapters.knowledge.factory import open_knowledge_base, writer_locks
from adapters.observability.metrics import SYNC_FAILURES, observe_sync
from adapters.slack.app import build_web_client
from adapters.sources.confluence_export import read_confluence_export
from adapters.sources.export_zip import WholeExportFetcher
from adapters.sources.mirror import FolderMirror
from adapters.sources.notion_export import read_notion_export
from adapters.sources.slack_channel import RECHECK_DAYS, TIER3_PER_MINUTE, SlackChannelFetcher
from adapters.sources.slack_export import SlackExportFetcher
from adapters.sources.website import DELAY, MAX_PAGES, WebsiteFetcher
from core.errors import InvalidInput, KbError
from core.knowledge.ingest import ingest
from core.knowledge.ingest_plan import IngestProgress, IngestSummary, document_id
from core.messages import phrase
from core.ports import SourceFetcher, SourceRegistry
from core.sources.models import SourceSpec, SourceState, SyncReport
from core.sources.schedule import due_sources, seconds_until_next
from core.sources.sync import SyncEdges, claimed_sync, sync_source

SOURCES_FOLDER = "sources"
CLAIM_LEASE = 6 * 3600.0  # a sync that runs longer than this may be taken over by another instance


@dataclass(frozen=True, slots=True)
class Kind:
    """A kind of source: the settings it needs and those it may have."""

    name: str
    required: tuple[str, ...]
    optional: tuple[str, ...]
    summary: str


KINDS: Mapping[str, Kind] = {
    kind.name: kind
    for kind in (
        Kind(
            "slack-channel",
            ("channel",),
            ("per_minute", "recheck_days", "private"),
            "a Slack channel, read live (private=true: its dataset is searched only in that channel)",
        ),
        Kind("slack-export", ("path",), ("channels", "workspace_url"), "a Slack workspace export zip"),
        Kind("confluence-export", ("path",), (), "a Confluence space's HTML export zip"),
        Kind("notion-export", ("path",), (), "a Notion export zip (Markdown and CSV)"),
        Kind("website", ("url",), ("hosts", "max_pages", "delay"), "a website, from its sitemap or by links"),
    )
}


def check_spec(spec: SourceSpec) -> None:
    """InvalidInput naming what is wrong: an unknown kind, a missing or unknown setting, a missing file."""
    kind = KINDS.get(spec.kind)
    if kind is None:
        raise InvalidInput(phrase("error.source_kind", kind=spec.kind, kinds=", ".join(KINDS)))
    missing = [key for key in kind.required if not spec.settings.get(key)]
    if missing:
        raise InvalidInput(
            phrase("error.source_setting_missing", kind=spec.kind, settings=", ".join(missing))
        )
    unknown = sorted(set(spec.settings) - set(kind.required) - set(kind.optional))
    if unknown:
        raise InvalidInput(
            phrase("error.source_setting_unknown", kind=spec.kind, settings=", ".join(unknown))
        )
    if "url" in kind.required and not spec.settings["url"].lower().startswith(("http://", "https://")):
        raise InvalidInput(phrase("error.source_url", url=spec.settings["url"]))
    if "path" in kind.required and not Path(spec.settings["path"]).is_file():
        raise InvalidInput(phrase("error.source_path_missing", path=spec.settings["path"]))


def _number(settings: Mapping[str, str], key: str, default: float) -> float:
    try:
        return float(settings.get(key) or default)
    except ValueError as exc:
        raise InvalidInput(phrase("error.source_setting_number", setting=key)) from exc


def build_fetcher(spec: SourceSpec, settings: Any) -> SourceFetcher:
    """The fetcher of a source's kind, built from its settings (and SLACK_BOT_TOKEN / SLACK_API_URL)."""
    check_spec(spec)
    values = spec.settings
    if spec.kind == "slack-channel":
        if not settings.slack.bot_token:
            raise InvalidInput(phrase("error.source_needs_token", kind=spec.kind, setting="SLACK_BOT_TOKEN"))
        client = build_web_client(settings.slack.bot_token, base_url=settings.slack.api_url)
        return SlackChannelFetcher(
            client,
            values["channel"].lstrip("#"),
            private=is_private(spec),
            per_minute=_number(values, "per_minute", TIER3_PER_MINUTE),
            recheck_days=_number(values, "recheck_days", RECHECK_DAYS),
        )
    if spec.kind == "website":
        hosts = [h.strip() for h in values.get("hosts", "").split(",") if h.strip()]
        return WebsiteFetcher(
            values["url"],
            hosts=hosts,
            max_pages=int(_number(values, "max_pages", MAX_PAGES)),
            delay=_number(values, "delay", DELAY),
        )
    if spec.kind == "confluence-export":
        return WholeExportFetcher(Path(values["path"]), read_confluence_export)
    if spec.kind == "notion-export":
        return WholeExportFetcher(Path(values["path"]), read_notion_export)
    channels = frozenset(c.strip().lstrip("#") for c in values.get("channels", "").split(",") if c.strip())
    return SlackExportFetcher(
        Path(values["path"]), channels=channels, workspace_url=values.get("workspace_url", "")
    )


def mirror_of(settings: Any, name: str) -> FolderMirror:
    """This machine's copy of a source's documents: KB_HOME/sources/NAME."""
    return FolderMirror(Path(settings.storage.home) / SOURCES_FOLDER / name)


def owner_name() -> str:
    """Who holds a sync claim: host and process."""
    return f"{socket.gethostname()}:{os.getpid()}"


async def run_sync(
    state: SourceState,
    settings: Any,
    kb: Any,
    limits: ReadLimits,
    *,
    fetcher: SourceFetcher | None = None,
    on_files: Callable[[int, int], object] | None = None,
    on_progress: Callable[[IngestProgress], object] | None = None,
) -> tuple[SyncReport, dict[str, str] | None]:
    """One sync of one source into its dataset through the open knowledge base, reading the mirror's files
    within limits (the caller holds the dataset's writer lock and the registry claim). on_files(files,
    bytes) is told what the ingest will read, then on_progress follows it, as for `kb ingest`."""
    spec = state.spec
    existing_model = await kb.dataset_model(spec.dataset)
    model = existing_model or settings.embedding.model

    async def apply(files: Mapping[Path, str]) -> IngestSummary:
        if on_files is not None:  # how many files and bytes the ingest will go through (a progress bar)
            sizes = await asyncio.to_thread(lambda: [p.stat().st_size for p in files if p.exists()])
            on_files(len(files), sum(sizes))
        return await ingest(
            kb,
            spec.dataset,
            list(files),
            read=functools.partial(read_document, limits=limits),
            content_hash=functools.partial(content_hash, limits=limits),
            embedding_model=model,
            unreadable=(UnreadableDocument, OSError, UnicodeError),
            sources=files,
            on_progress=on_progress,
        )

    async def remove(keys: Sequence[str]) -> int:
        return await delete_keys(kb, spec.dataset, keys)

    try:
        chosen = fetcher or build_fetcher(spec, settings)
    except KbError as exc:
        return SyncReport(spec.name, time.time(), error=exc.message("en")), None
    edges = SyncEdges(chosen, mirror_of(settings, spec.name), apply, remove)
    report, versions = await sync_source(state, edges)
    await kb.flush()
    return report, versions


async def delete_keys(kb: Any, dataset: str, keys: Sequence[str]) -> int:
    """Delete the documents of these source keys from the dataset; how many there were."""
    known = {doc.document_id for doc in await kb.list_documents(dataset)}
    removed = 0
    for identity in (document_id(dataset, key) for key in keys):
        if identity in known:
            await kb.delete_document(dataset, identity)
            removed += 1
    return removed


async def remove_documents(state: SourceState, settings: Any) -> int:
    """Delete a source's documents from its dataset and its mirror folder; how many were deleted."""
    async with open_knowledge_base(settings) as kb:
        removed = await delete_keys(kb, state.spec.dataset, list(state.versions))
        await kb.flush()
    await mirror_of(settings, state.spec.name).remove(list(state.versions))
    return removed


async def run_schedule(
    settings: Any,
    kb: Any,
    registry: SourceRegistry,
    limits: ReadLimits,
    *,
    say: Callable[[str], object] = print,
    clock: Callable[[], float] = time.time,
) -> None:
    """Under `kb serve`: sync each scheduled source when it is due (core.sources.schedule), one at a time in
    this instance and, through the registry's claim, across instances; until cancelled. A failed sync is
    said and recorded, and the schedule goes on."""
    locks = writer_locks(settings, command="kb serve (source sync)")
    owner = owner_name()

    def hold(dataset: str) -> AbstractAsyncContextManager[object]:
        return locks.hold(dataset, wait=True)

    async def run(state: SourceState) -> tuple[SyncReport, dict[str, str] | None]:
        return await run_sync(state, settings, kb, limits)

    try:
        while True:
            for state in due_sources(await registry.list_sources(), clock()):
                try:
                    report = await claimed_sync(
                        state, registry, owner=owner, hold=hold, run=run, lease=CLAIM_LEASE, clock=clock
                    )
                except Exception as exc:  # recorded by claimed_sync; the other sources still sync
                    say(f"kb serve: source {state.spec.name}: sync failed ({type(exc).__name__})")
                    SYNC_FAILURES.labels(source=state.spec.name).inc()
                    continue
                if report is not None:
                    observe_sync(report)
                    say(f"kb serve: source {state.spec.name}: {report.line()}")
            await asyncio.sleep(seconds_until_next(await registry.list_sources(), clock()))
    finally:
        await locks.close()


def is_private(spec: SourceSpec) -> bool:
    """A slack-channel source marked private=true: its dataset is kept to its channel."""
    return spec.kind == "slack-channel" and spec.settings.get("private", "").lower() == "true"


def check_private_dataset(spec: SourceSpec, others: Sequence[SourceState]) -> None:
    """InvalidInput when a private source would share its dataset with another source (its threads would
    be hidden with theirs, or theirs exposed with its)."""
    sharing = [
        state for state in others if state.spec.dataset == spec.dataset and state.spec.name != spec.name
    ]
    if sharing and (is_private(spec) or any(is_private(state.spec) for state in sharing)):
        raise InvalidInput(phrase("error.source_private_dataset", dataset=spec.dataset))


async def private_datasets(sources: Callable[[], Awaitable[Sequence[SourceState]]]) -> dict[str, str]:
    """dataset -> the private Slack channel it holds (its slack-channel source has private=true): such a
    dataset is searched only in that channel or by its members (adapters.slack.inbound.private_scopes)."""
    return {
        state.spec.dataset: state.spec.settings["channel"].lstrip("#")
        for state in await sources()
        if is_private(state.spec)
    }
