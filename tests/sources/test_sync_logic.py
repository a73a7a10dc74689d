"""core.sources.sync with in-memory fakes of its edges: what is written, kept, removed and reported, and that
a failed fetch changes nothing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from core.errors import SourceUnreadable
from core.knowledge.ingest_plan import IngestSummary
from core.sources.models import Fetched, SourceSpec, SourceState, SyncedDocument
from core.sources.sync import SyncEdges, gone_keys, known_versions, sync_source

SPEC = SourceSpec("s", "slack-channel", "d", {"channel": "C1"})


class Mirror:
    def __init__(self, present: set[str]) -> None:
        self.files: dict[str, SyncedDocument | None] = {key: None for key in present}

    def path_of(self, key: str) -> Path:
        return Path("/mirror") / key

    async def present(self, keys: Sequence[str]) -> set[str]:
        return {key for key in keys if key in self.files}

    async def write(self, documents: Sequence[SyncedDocument]) -> None:
        self.files.update({d.key: d for d in documents})

    async def remove(self, keys: Sequence[str]) -> None:
        for key in keys:
            self.files.pop(key, None)


class Source:
    def __init__(self, fetched: Fetched | Exception) -> None:
        self.fetched = fetched
        self.asked: list[Mapping[str, str]] = []

    async def fetch(self, known: Mapping[str, str]) -> Fetched:
        self.asked.append(dict(known))
        if isinstance(self.fetched, Exception):
            raise self.fetched
        return self.fetched


class Index:
    def __init__(self) -> None:
        self.applied: list[dict[Path, str]] = []
        self.removed: list[str] = []

    async def apply(self, files: Mapping[Path, str]) -> IngestSummary:
        self.applied.append(dict(files))
        return IngestSummary(
            len(files),
            added=1,
            unchanged=len(files) - 1,
            removed=0,
            skipped=0,
            chunks_added=1,
            chunks_removed=0,
            seconds=0.1,
        )

    async def remove(self, keys: Sequence[str]) -> int:
        self.removed.extend(keys)
        return len(keys)


def test_known_versions_are_only_those_with_a_file_here_and_gone_keys_are_the_missing_ones() -> None:
    """A key whose file this machine lacks is fetched again; a key the source no longer has is gone."""
    assert known_versions({"a": "1", "b": "2"}, {"a"}) == {"a": "1"}
    assert gone_keys({"a": "1", "b": "2", "c": "3"}, frozenset({"b"})) == ["a", "c"]


async def test_a_sync_writes_the_changed_keeps_the_unchanged_and_removes_the_gone() -> None:
    """The fetch is told the versions it may trust; every live key is ingested under its key; the gone key's
    document and file are removed; the new versions are the fetched ones plus the kept ones."""
    new = SyncedDocument("k3", "T3", "text three", "https://x/3", "v3")
    source = Source(Fetched((new,), frozenset({"k1"}), (("k9", "no text"),)))
    mirror, index = Mirror({"k1", "k2"}), Index()
    state = SourceState(SPEC, {"k1": "v1", "k2": "v2", "k4": "v4"})
    report, versions = await sync_source(state, SyncEdges(source, mirror, index.apply, index.remove))
    assert source.asked == [{"k1": "v1", "k2": "v2"}]  # k4 has no file here: fetched again
    assert index.applied == [{Path("/mirror/k1"): "k1", Path("/mirror/k3"): "k3"}]
    assert index.removed == ["k2", "k4"] and set(mirror.files) == {"k1", "k3"}
    assert versions == {"k1": "v1", "k3": "v3"}
    assert (report.added, report.unchanged, report.removed, report.skipped) == (1, 1, 2, (("k9", "no text"),))


async def test_a_failed_fetch_removes_nothing_and_keeps_the_versions() -> None:
    """A source that cannot be read whole is reported failed; nothing is ingested or removed."""
    source = Source(SourceUnreadable("#C1", "not_in_channel"))
    mirror, index = Mirror({"k1"}), Index()
    report, versions = await sync_source(
        SourceState(SPEC, {"k1": "v1"}), SyncEdges(source, mirror, index.apply, index.remove)
    )
    assert versions is None and not report.ok and "not_in_channel" in report.error
    assert index.applied == [] and index.removed == [] and set(mirror.files) == {"k1"}
