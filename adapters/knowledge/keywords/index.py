"""A dataset's keyword index: BM25 over immutable segments that one manifest names, shared by processes.

A change costs in proportion to the change: added chunks become a new segment, removed ones are marked
removed in the manifest (their segment is not rewritten), and segments of like size are merged by a
tiered policy (merging.py). The manifest is kept by a shelf (shelf.py: a file replaced atomically under
an flock; postgres_shelf.py: a row shared by machines), so every process using it (kb serve, kb ingest,
several kb serve instances beside one Chroma server) reads the same segments, memory-mapped from the
local folder, instead of each building a copy; a process takes another's change at its next refresh().
docs/storage.md#keyword-segments. Every method blocks and is CPU- or disk-bound: the
knowledge base calls them from worker threads.
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
import uuid
from collections.abc import Hashable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from adapters.knowledge.keywords.merging import SegmentSize, merges_due
from adapters.knowledge.keywords.scoring import BM25_B, BM25_K1, Part, Searchable, top_scores
from adapters.knowledge.keywords.segment import Segment, build_segment, merge_segments
from adapters.knowledge.keywords.shelf import FolderShelf, Shelf
from adapters.knowledge.keywords.tokens import TOKENIZER, tokens_of

log = logging.getLogger(__name__)

SEGMENTS = "segments"
FORMAT = f"segments-1/{TOKENIZER}/k1={BM25_K1}/b={BM25_B}"  # an index saved otherwise is rebuilt
GRACE_SECONDS = 600.0  # a segment no manifest names is deleted after this long (a reader may be opening it)


def _new_name() -> str:
    return f"{time.time_ns():x}-{uuid.uuid4().hex[:8]}"


def _current(manifest: dict[str, Any] | None) -> dict[str, Any] | None:
    """The manifest if this format wrote it (an index saved otherwise is rebuilt)."""
    return manifest if manifest is not None and manifest.get("format") == FORMAT else None


class KeywordIndex:
    """BM25 over the chunks of one dataset; thread-safe (one writer lock, lock-free reads of a snapshot)."""

    def __init__(self, directory: Path | None = None, shelf: Shelf | None = None) -> None:
        """directory: the local folder segments are read from (None: in memory only); shelf: where the
        manifest is kept (default: that folder)."""
        self.directory = directory
        self._shelf = shelf if shelf is not None or directory is None else FolderShelf(directory)
        self._segments: dict[str, Segment] = {}  # in manifest order, then those built here
        self._removed: dict[str, set[int]] = {}  # segment name -> removed rows
        self._pending: dict[str, str] = {}  # chunk id -> tokens not in a segment yet
        self._local: list[str] = []  # segments built here and not saved yet
        self._dropped: set[str] = set()  # ids removed or replaced here since the last save
        self._lock = threading.Lock()
        self._searchable = Searchable.of(())
        self._stamp: Hashable | None = None
        self.signature = ""
        self.dirty = False
        self._unsaved = False

    # ---------- what is held ----------

    def _alive(self, name: str) -> np.ndarray | None:
        removed = self._removed.get(name)
        if not removed:
            return None
        alive = np.ones(len(self._segments[name]), dtype=bool)
        alive[list(removed)] = False
        return alive

    def __len__(self) -> int:
        removed = sum(len(rows) for rows in self._removed.values())
        return sum(len(segment) for segment in self._segments.values()) - removed + len(self._pending)

    def ids(self) -> set[str]:
        """Ids of the chunks whose tokens are held."""
        with self._lock:
            held = set(self._pending)
            for name, segment in self._segments.items():
                removed = self._removed.get(name, set())
                held.update(chunk_id for row, chunk_id in enumerate(segment.ids) if row not in removed)
        return held

    @property
    def unsaved(self) -> bool:
        """Whether changes are held here that save() has not published yet."""
        return self._unsaved

    def segment_count(self) -> int:
        """How many segments the index is made of (pending chunks not counted)."""
        return len(self._segments)

    # ---------- changes ----------

    @staticmethod
    def tokenise(items: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
        """(chunk id, text) pairs as (chunk id, space-joined tokens): the CPU-heavy part of add()."""
        return [(chunk_id, tokens_of(text)) for chunk_id, text in items]

    def add(self, items: Iterable[tuple[str, str]]) -> None:
        """Tokenise and hold (chunk id, text) pairs; searchable after the next rebuild()."""
        self.add_tokenised(self.tokenise(items))

    def _hide(self, ids: Sequence[str]) -> bool:
        changed = False
        for name, segment in self._segments.items():
            rows = segment.rows_of(ids)
            if rows:
                removed = self._removed.setdefault(name, set())
                before = len(removed)
                removed.update(rows)
                changed = changed or len(removed) > before
        for chunk_id in ids:
            changed = self._pending.pop(chunk_id, None) is not None or changed
        return changed

    def add_tokenised(self, tokenised: Iterable[tuple[str, str]]) -> None:
        """Hold already tokenised (chunk id, joined tokens) pairs; a held id's older tokens are replaced."""
        pairs = list(tokenised)
        if not pairs:
            return
        ids = [chunk_id for chunk_id, _ in pairs]
        with self._lock:
            self._hide(ids)
            self._pending.update(pairs)
            self._dropped.update(ids)
            self.dirty = self._unsaved = True

    def remove(self, ids: Iterable[str]) -> None:
        """Forget these chunk ids (unknown ids are ignored)."""
        wanted = list(ids)
        with self._lock:
            self._dropped.update(wanted)  # also hidden in segments another process saves meanwhile
            if self._hide(wanted):
                self.dirty = self._unsaved = True

    def apply(self, removed: Iterable[str], tokenised: Iterable[tuple[str, str]], signature: str) -> None:
        """Apply one document's change (tokens from tokenise()) and record the catalog signature."""
        self.remove(removed)
        self.add_tokenised(tokenised)
        with self._lock:
            self.signature = signature
            self.dirty = self._unsaved = True

    def rebuild(self) -> None:
        """Make held changes searchable: pending chunks become a segment (cost in proportion to them)."""
        with self._lock:
            if self._pending:
                name = _new_name()
                self._segments[name] = build_segment(name, list(self._pending.items()))
                self._local.append(name)
                self._pending.clear()
            self._publish()

    def _publish(self) -> None:
        """The snapshot searches read (call with the lock held)."""
        parts = [Part(segment, self._alive(name)) for name, segment in self._segments.items()]
        self._searchable = Searchable.of([part for part in parts if part.live_rows])
        self.dirty = bool(self._pending)

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        """Up to k (chunk id, raw BM25 score) pairs with score > 0, best first, ties by id."""
        words = [w for w in tokens_of(query).split(" ") if w]
        if not words:
            return []
        return top_scores(self._searchable, words, k)

    # ---------- the shared folder ----------

    def _segment_folder(self, name: str) -> Path:
        assert self.directory is not None
        return self.directory / SEGMENTS / name

    def save(self) -> None:
        """Publish what changed here: new segments written, then the manifest replaced under the lock.

        Segments and removals another process saved meanwhile are kept (and this process's removals
        applied to them too); due merges run here, after which old segments are deleted once no
        manifest has named them for GRACE_SECONDS.
        """
        if self._shelf is None or not self._unsaved:
            return
        if self._pending:
            self.rebuild()
        with self._lock, self._shelf.holding():
            self._take_saved(_current(self._shelf.read()))
            for name in self._local:
                self._segments[name].save(self._segment_folder(name))
                self._shelf.put(name, self._segment_folder(name))
            self._merge_due()
            self._write_manifest()
            self._local.clear()
            self._dropped.clear()
            self._unsaved = False
            self._publish()
        self._collect_garbage()

    def _take_saved(self, manifest: dict[str, Any] | None) -> None:
        """Join the saved state (call under both locks): its segments and removals, and this side's."""
        if manifest is None:
            return
        saved = [str(name) for name in manifest.get("segments", [])]
        gone = [name for name in self._segments if name not in saved and name not in self._local]
        for name in gone:  # merged away by another process: its rows are in a saved segment
            del self._segments[name]
            self._removed.pop(name, None)
        merged: dict[str, Segment] = {}
        for name in saved:
            segment = self._segments.get(name) or self._open_segment(name)
            merged[name] = segment
            removed = self._removed.setdefault(name, set())
            removed.update(int(row) for row in manifest.get("removed", {}).get(name, []))
            if self._dropped:
                removed.update(segment.rows_of(list(self._dropped)))
        for name in self._local:
            merged[name] = self._segments[name]
        self._segments = merged

    def _merge_due(self) -> None:
        """Merge segments while the policy asks for it (call under both locks)."""
        while True:
            sizes = [
                SegmentSize(name, len(segment), len(self._removed.get(name, ())))
                for name, segment in self._segments.items()
            ]
            groups = merges_due(sizes)
            if not groups:
                return
            for group in groups:
                name = _new_name()
                parts = []
                for old in group:
                    alive = self._alive(old)
                    parts.append(
                        (
                            self._segments[old],
                            np.ones(len(self._segments[old]), bool) if alive is None else alive,
                        )
                    )
                merged = merge_segments(name, parts)
                order = list(self._segments)
                at = order.index(group[0])
                rebuilt = {n: self._segments[n] for n in order[:at] if n not in group}
                if len(merged):  # a segment whose every row was removed is just dropped
                    merged.save(self._segment_folder(name))
                    assert self._shelf is not None
                    self._shelf.put(name, self._segment_folder(name))
                    rebuilt[name] = merged
                rebuilt.update((n, self._segments[n]) for n in order[at:] if n not in group)
                for old in group:
                    self._removed.pop(old, None)
                self._segments = rebuilt

    def _write_manifest(self) -> None:
        assert self._shelf is not None
        manifest = {
            "format": FORMAT,
            "signature": self.signature,
            "segments": list(self._segments),
            "removed": {name: sorted(rows) for name, rows in self._removed.items() if rows},
        }
        self._stamp = self._shelf.write(manifest)

    def _open_segment(self, name: str) -> Segment:
        """A segment the manifest names, its files fetched into the local folder first if need be."""
        assert self._shelf is not None
        self._shelf.fetch(name, self._segment_folder(name))
        return Segment.load(self._segment_folder(name))

    def _collect_garbage(self) -> None:
        """Delete segment folders no manifest names any more, once GRACE_SECONDS old."""
        if self.directory is None:
            return
        folder = self.directory / SEGMENTS
        if not folder.exists():
            return
        named = set(self._segments)
        for path in folder.iterdir():
            try:
                old = time.time() - path.stat().st_mtime > GRACE_SECONDS
            except OSError:
                continue
            if path.name not in named and old:
                shutil.rmtree(path, ignore_errors=True)

    @property
    def where(self) -> str:
        """Where the index is kept, for messages: its folder, or the database."""
        return "memory" if self._shelf is None else self._shelf.where

    def has_saved(self) -> bool:
        """Whether a manifest is saved (in whatever format)."""
        return self._shelf is not None and self._shelf.stamp() is not None

    def saved_signature(self) -> str | None:
        """The catalog signature the saved index matches, read from its manifest alone; None when there is
        none, it cannot be read, or another format or tokenizer wrote it."""
        manifest = None if self._shelf is None else _current(self._shelf.read())
        return None if manifest is None else str(manifest.get("signature", ""))

    def clear_saved(self) -> None:
        """Delete the saved index and the local folder (the dataset is dropped or rebuilt)."""
        if self._shelf is not None:
            self._shelf.clear()
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)

    def close(self) -> None:
        """Release the shelf's connection, if it holds one."""
        if self._shelf is not None:
            self._shelf.close()

    def reread(self) -> KeywordIndex | None:
        """A fresh copy loaded from the shelf (not this process's memory); None when it cannot be read."""
        fresh = KeywordIndex(self.directory, self._shelf)
        return fresh if fresh.load() else None

    def load(self) -> bool:
        """Read the saved index (segments already loaded here are reused); False (and empty) when there is
        none or it cannot be read."""
        if self._shelf is None:
            return False
        for attempt in range(2):  # a segment deleted between reading the manifest and opening it: again
            stamp = self._shelf.stamp()
            manifest = _current(self._shelf.read())
            if manifest is None:
                if stamp is not None:
                    log.info("keyword index %s was saved in another format; rebuilding", self.directory)
                return False
            try:
                segments = {
                    str(name): self._segments.get(str(name)) or self._open_segment(str(name))
                    for name in manifest.get("segments", [])
                }
                removed = {
                    str(name): {int(row) for row in rows}
                    for name, rows in manifest.get("removed", {}).items()
                }
            except (OSError, ValueError, KeyError) as exc:
                if attempt == 0:
                    continue
                log.warning("keyword index %s is unreadable (%s); it will be rebuilt", self.directory, exc)
                return False
            with self._lock:
                self._segments, self._removed = segments, removed
                self._pending.clear()
                self._local.clear()
                self._dropped.clear()
                self.signature = str(manifest.get("signature", ""))
                self._unsaved = False
                self._stamp = stamp
                self._publish()
            return True
        return False

    def refresh(self) -> bool:
        """Take what another process saved since this one loaded or saved; True when something changed.

        A stat of the manifest when nothing did. Changes held here and not saved yet are kept (nothing is
        read then): save() joins both.
        """
        if self._shelf is None or self._unsaved:
            return False
        if self._shelf.stamp() == self._stamp:
            return False
        return self.load()

    def sync(self, live_ids: Sequence[str], fetch_texts: Any, signature: str) -> bool:
        """Make the held tokens cover exactly live_ids, fetching missing texts; True when they changed.

        fetch_texts(ids) -> {id: text} reads the texts to index (from Chroma). New chunks are only held;
        rebuild() makes them searchable.
        """
        wanted = set(live_ids)
        held = self.ids()
        extra = held - wanted
        missing = [chunk_id for chunk_id in live_ids if chunk_id not in held]
        if extra:
            self.remove(extra)
        if missing:
            log.info("keyword index: indexing %d chunks read back from the vector store", len(missing))
            for start in range(0, len(missing), 2000):
                texts = fetch_texts(missing[start : start + 2000])
                self.add(texts.items())
        if self.signature != signature:
            self.signature = signature
            self._unsaved = True
        return bool(extra or missing)
