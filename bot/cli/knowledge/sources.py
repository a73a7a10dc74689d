"""`kb sources add|list|show|sync|remove`: knowledge kept elsewhere (Slack channels, Slack exports), synced
into a dataset and kept current (core.sources; kinds and settings in docs/sources.md).

`sync` holds the source's claim (one sync per source across instances) and the dataset's writer lock, and
reports like `kb ingest`; exit 1 when a source could not be read (nothing of it changed then).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from adapters.knowledge.factory import open_knowledge_base
from adapters.store.backends import open_store
from adapters.store.source_registry import SqlSourceRegistry
from bot.cli.durations import seconds_of
from bot.cli.knowledge.ingest import read_limits
from bot.cli.knowledge.ingest_progress import IngestReporter
from bot.cli.knowledge.writing import add_no_wait, held_for_writing
from bot.compose.sources import (
    CLAIM_LEASE,
    KINDS,
    check_private_dataset,
    check_spec,
    owner_name,
    remove_documents,
    run_sync,
)
from bot.settings import Settings
from core.errors import InvalidInput, NotFound
from core.messages import phrase
from core.sources.models import SOURCE_NAME, SourceSpec, SourceState, SyncReport
from core.sources.sync import claimed_sync


def register(commands: Any) -> None:
    """Add `kb sources` and its actions."""
    sources = commands.add_parser("sources", help="Slack channels and exports synced into a dataset")
    actions = sources.add_subparsers(dest="sources_action", metavar="ACTION", required=True)
    add = actions.add_parser("add", help="register a source (then: kb sources sync NAME)")
    add.add_argument("name", metavar="NAME", help="a name for the source")
    add.add_argument("--kind", required=True, choices=sorted(KINDS), help="what it is")
    add.add_argument("--dataset", required=True, help="the dataset its documents go into")
    add.add_argument("--channel", help="slack-channel: the channel id (C0123...)")
    add.add_argument("--path", help="slack-export, confluence-export, notion-export: the export zip")
    add.add_argument("--url", help="website: its sitemap.xml, or a start page whose links are followed")
    add.add_argument("--channels", help="slack-export: only these channels (names or ids, comma-separated)")
    add.add_argument("--workspace-url", help="slack-export: https://yours.slack.com, for the threads' links")
    add.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="another setting of the kind (repeatable)",
    )
    add.add_argument(
        "--every", default="0", help="sync under `kb serve` this often: 30m, 6h, 1d (0: by hand)"
    )
    add.set_defaults(handler=run_add)
    listing = actions.add_parser("list", help="every source: kind, dataset, schedule, last sync")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(handler=run_list)
    show = actions.add_parser("show", help="one source: settings, documents, the last sync in full")
    show.add_argument("name", metavar="NAME", help="the source")
    show.set_defaults(handler=run_show)
    sync = actions.add_parser("sync", help="bring sources' documents up to date (all when none is named)")
    sync.add_argument("names", nargs="*", metavar="NAME", help="the sources to sync (default: every one)")
    add_no_wait(sync)
    sync.set_defaults(handler=run_sync_command)
    remove = actions.add_parser("remove", help="forget a source and delete its documents from the dataset")
    remove.add_argument("name", metavar="NAME", help="the source")
    remove.add_argument("--keep-documents", action="store_true", help="leave its documents in the dataset")
    add_no_wait(remove)
    remove.set_defaults(handler=run_remove)


def parse_every(text: str) -> float:
    """Seconds between scheduled syncs from "30m", "6h", "1d", "90s" or "0" (by hand only)."""
    seconds = seconds_of(text)
    if seconds is None or 0 < seconds < 60:
        raise InvalidInput(phrase("error.source_every"))
    return seconds


def spec_from(args: argparse.Namespace) -> SourceSpec:
    """The source the `add` arguments describe (InvalidInput for a bad name, kind or setting)."""
    if not SOURCE_NAME.match(args.name or ""):
        raise InvalidInput(phrase("error.source_name"))
    settings: dict[str, str] = {}
    for key, value in (
        ("channel", args.channel),
        ("path", args.path),
        ("channels", args.channels),
        ("url", args.url),
    ):
        if value:
            settings[key] = value
    if args.workspace_url:
        settings["workspace_url"] = args.workspace_url
    for pair in args.set:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InvalidInput(phrase("error.source_setting_unknown", kind=args.kind, settings=pair))
        settings[key.strip()] = value.strip()
    if "path" in settings:
        settings["path"] = str(Path(settings["path"]).expanduser().resolve())
    dataset = (args.dataset or "").strip()
    if not dataset:
        raise InvalidInput(phrase("error.source_setting_missing", kind=args.kind, settings="dataset"))
    spec = SourceSpec(args.name, args.kind, dataset, settings, parse_every(args.every), time.time())
    check_spec(spec)
    return spec


def _when(timestamp: float) -> str:
    return dt.datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M") if timestamp else "never"


def _every(seconds: float) -> str:
    if not seconds:
        return "by hand"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"every {int(seconds // size)}{unit}"
    return f"every {int(seconds)}s"


def last_sync_text(report: SyncReport | None) -> str:
    """When the last sync ran and what it did, in one line."""
    if report is None:
        return "never synced"
    return f"{_when(report.started_at)} · {report.line()}"


def format_sources(states: Sequence[SourceState]) -> str:
    """One line per source: name, kind, dataset, schedule, documents, last sync."""
    if not states:
        return "no sources (kb sources add NAME --kind ... --dataset ...)"
    lines = []
    for state in states:
        spec = state.spec
        lines.append(
            f"{spec.name}  {spec.kind}  → {spec.dataset}  {_every(spec.every)}  "
            f"{len(state.versions)} documents  last sync: {last_sync_text(state.last)}"
        )
    return "\n".join(lines)


async def _registry(settings: Settings) -> tuple[Any, SqlSourceRegistry]:
    store = await open_store(settings.storage.effective_database_url)
    return store, SqlSourceRegistry(store.database)


async def _required(registry: SqlSourceRegistry, name: str) -> SourceState:
    state = await registry.get_source(name)
    if state is None:
        raise NotFound(phrase("error.no_such_source", name=name))
    return state


async def run_add(args: argparse.Namespace, settings: Settings) -> int:
    """Register a source; its first sync is `kb sources sync NAME` (or the schedule under `kb serve`)."""
    spec = spec_from(args)
    store, registry = await _registry(settings)
    async with store:
        check_private_dataset(spec, await registry.list_sources())
        await registry.add_source(spec)
    print(f"added source {spec.name} ({spec.kind} → dataset {spec.dataset}, {_every(spec.every)})")
    print(f"next: kb sources sync {spec.name}")
    return 0


async def run_list(args: argparse.Namespace, settings: Settings) -> int:
    store, registry = await _registry(settings)
    async with store:
        states = await registry.list_sources()
    if args.json:
        rows = [
            {
                "name": s.spec.name,
                "kind": s.spec.kind,
                "dataset": s.spec.dataset,
                "settings": dict(s.spec.settings),
                "every_seconds": s.spec.every,
                "documents": len(s.versions),
                "last_sync": json.loads(s.last.to_json()) if s.last else None,
            }
            for s in states
        ]
        print(json.dumps(rows, ensure_ascii=False, indent=2))
    else:
        print(format_sources(states))
    return 0


async def run_show(args: argparse.Namespace, settings: Settings) -> int:
    store, registry = await _registry(settings)
    async with store:
        state = await _required(registry, args.name)
    spec = state.spec
    print(f"source {spec.name}: {spec.kind} → dataset {spec.dataset}, {_every(spec.every)}")
    for key, value in sorted(spec.settings.items()):
        print(f"  {key}: {value}")
    print(f"documents: {len(state.versions)}")
    print(f"last sync: {last_sync_text(state.last)}")
    for where, why in state.last.skipped if state.last else ():
        print(f"  skipped {where}: {why}")
    return 0


async def sync_one(
    args: argparse.Namespace, settings: Settings, registry: SqlSourceRegistry, name: str
) -> SyncReport:
    """Claim, sync under the dataset's writer lock, record; a source another instance is syncing is
    reported as such and left to it."""
    state = await _required(registry, name)

    async def run(chosen: SourceState) -> tuple[SyncReport, dict[str, str] | None]:
        with IngestReporter(sys.stderr, interactive=sys.stderr.isatty()) as reporter:

            def on_files(files: int, total_bytes: int) -> None:
                reporter.start(files=files, total_bytes=total_bytes, dataset=chosen.spec.dataset)

            async with open_knowledge_base(settings) as kb:  # opened under the writer lock, as kb ingest
                return await run_sync(
                    chosen,
                    settings,
                    kb,
                    read_limits(settings),
                    on_files=on_files,
                    on_progress=reporter.update,
                )

    report = await claimed_sync(
        state,
        registry,
        owner=owner_name(),
        hold=lambda dataset: held_for_writing(args, settings, dataset),
        run=run,
        lease=CLAIM_LEASE,
    )
    return report or SyncReport(name, time.time(), error="another instance is syncing it now")


async def run_sync_command(args: argparse.Namespace, settings: Settings) -> int:
    store, registry = await _registry(settings)
    failed = 0
    async with store:
        names = args.names or [state.spec.name for state in await registry.list_sources()]
        if not names:
            print("no sources to sync (kb sources add NAME --kind ... --dataset ...)", file=sys.stderr)
            return 1
        for name in names:
            report = await sync_one(args, settings, registry, name)
            print(f"{name}: {report.line()}")
            for where, why in report.skipped:
                print(f"  skipped {where}: {why}")
            failed += 0 if report.ok else 1
    return 1 if failed else 0


async def run_remove(args: argparse.Namespace, settings: Settings) -> int:
    store, registry = await _registry(settings)
    async with store:
        state = await _required(registry, args.name)
        removed = 0
        if not args.keep_documents:
            async with held_for_writing(args, settings, state.spec.dataset):
                removed = await remove_documents(state, settings)
        await registry.remove_source(args.name)
    kept = (
        "kept its documents"
        if args.keep_documents
        else f"deleted {removed} documents from {state.spec.dataset}"
    )
    print(f"removed source {args.name}; {kept}")
    return 0
