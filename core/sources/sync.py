"""One sync of one source: fetch what changed, mirror it to files, ingest them, remove what is gone.

The ingest decides added / changed / unchanged from content, as for files (core.knowledge.ingest); the
fetch only saves reading what the source says did not change. A failed fetch changes nothing: no
document is removed and the versions of the last good sync stay (see docs/sources.md).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path

from core.errors import KbError
from core.knowledge.ingest_plan import IngestSummary
from core.ports import SourceFetcher, SourceMirror, SourceRegistry
from core.sources.models import SourceState, SyncReport

Apply = Callable[[Mapping[Path, str]], Awaitable[IngestSummary]]
Remove = Callable[[Sequence[str]], Awaitable[int]]


@dataclass(frozen=True, slots=True)
class SyncEdges:
    """What one sync touches: the source, its mirror, the ingest of mirror files (path -> key) and the
    removal of documents by key (returns how many it removed)."""

    fetcher: SourceFetcher
    mirror: SourceMirror
    apply: Apply
    remove: Remove


def known_versions(versions: Mapping[str, str], present: set[str]) -> dict[str, str]:
    """The versions a fetch may trust: only those whose file is on this machine (else it is read again)."""
    return {key: version for key, version in versions.items() if key in present}


def gone_keys(previous: Mapping[str, str], live: frozenset[str]) -> list[str]:
    """Keys the last sync had that the source no longer holds, in order."""
    return sorted(key for key in previous if key not in live)


async def sync_source(
    state: SourceState, edges: SyncEdges, *, clock: Callable[[], float] = time.time
) -> tuple[SyncReport, dict[str, str] | None]:
    """Sync one source; returns its report and the versions to keep (None when the sync failed)."""
    started = clock()
    name = state.spec.name
    try:
        present = await edges.mirror.present(sorted(state.versions))
        fetched = await edges.fetcher.fetch(known_versions(state.versions, present))
    except KbError as exc:
        return SyncReport(name, started, clock() - started, error=exc.message("en")), None
    await edges.mirror.write(fetched.documents)
    files = {edges.mirror.path_of(key): key for key in sorted(fetched.live)}
    summary = await edges.apply(files)
    keys_of = {str(path): key for path, key in files.items()}
    gone = gone_keys(state.versions, fetched.live)
    removed = await edges.remove(gone) if gone else 0
    await edges.mirror.remove(gone)
    versions = {document.key: document.version for document in fetched.documents}
    versions.update({key: state.versions[key] for key in fetched.kept if key in state.versions})
    skipped = (*fetched.skipped, *((keys_of.get(path, path), why) for path, why in summary.skipped_files))
    report = SyncReport(
        name,
        started,
        clock() - started,
        added=summary.added,
        changed=summary.changed,
        unchanged=summary.unchanged,
        removed=removed + summary.removed,
        skipped=tuple(skipped),
        chunks_added=summary.chunks_added,
        chunks_removed=summary.chunks_removed,
    )
    return report, versions


Hold = Callable[[str], AbstractAsyncContextManager[object]]
RunSync = Callable[[SourceState], Awaitable[tuple[SyncReport, dict[str, str] | None]]]


async def claimed_sync(
    state: SourceState,
    registry: SourceRegistry,
    *,
    owner: str,
    hold: Hold,
    run: RunSync,
    lease: float,
    clock: Callable[[], float] = time.time,
) -> SyncReport | None:
    """Claim the source, run its sync holding the dataset (hold(dataset)), and record the outcome; None when
    another owner holds the claim. A sync that raises or is cancelled is recorded as failed (the claim is
    released at once, not left to lapse) and the error goes on."""
    name = state.spec.name
    if not await registry.claim_sync(name, owner, now=clock(), lease=lease):
        return None
    try:
        async with hold(state.spec.dataset):
            report, versions = await run(state)
    except BaseException as exc:
        reason = exc.message("en") if isinstance(exc, KbError) else f"interrupted ({type(exc).__name__})"
        failed = SyncReport(name, clock(), error=reason)
        await asyncio.shield(registry.finish_sync(name, owner, failed, None))
        raise
    await registry.finish_sync(name, owner, report, versions)
    return report
