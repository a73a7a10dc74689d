"""One immutable keyword segment: the term frequencies of a batch of chunks, column (token) by column.

A segment stores raw counts, not BM25 scores, so that scores can be computed at query time with the
statistics of the whole index (adapters.knowledge.keywords.scoring): adding a segment never touches
another one. bm25s (which the index used before) precomputes scores with one corpus's statistics and
has no incremental add, which is why this is written by hand (docs/storage.md#keyword-segments).
Saved as a folder of .npy arrays (memory-mapped on load) and two JSON lists; never changed once written.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

TF_MAX = np.iinfo(np.uint16).max  # a count above this in one chunk is stored as this
_ARRAYS = ("indptr", "rows", "tf", "lengths")


@dataclass(frozen=True, eq=False)
class Segment:
    """Chunks (rows) by tokens (columns) in CSC form: the postings of column c are rows/tf[indptr[c]:indptr[c+1]]."""

    name: str
    ids: list[str]  # row -> chunk id
    vocab: dict[str, int]  # token -> column
    indptr: np.ndarray  # int64, one more than the columns
    rows: np.ndarray  # int32, the row of each posting
    tf: np.ndarray  # uint16, the count of each posting
    lengths: np.ndarray  # int32, tokens per row
    _row_of: dict[str, int] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.ids)

    def postings(self, token: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(rows, counts) of the chunks holding token; None when no chunk of this segment does."""
        column = self.vocab.get(token)
        if column is None:
            return None
        start, end = int(self.indptr[column]), int(self.indptr[column + 1])
        return self.rows[start:end], self.tf[start:end]

    def rows_of(self, ids: Sequence[str]) -> list[int]:
        """The rows of those ids this segment holds (its id -> row table is built on first use)."""
        if not self._row_of and self.ids:
            self._row_of.update((chunk_id, row) for row, chunk_id in enumerate(self.ids))
        return [row for row in map(self._row_of.get, ids) if row is not None]

    def save(self, folder: Path) -> None:
        """Write the segment into folder (created; the caller makes it visible by naming it in the manifest)."""
        folder.mkdir(parents=True, exist_ok=False)
        for name in _ARRAYS:
            np.save(folder / f"{name}.npy", np.ascontiguousarray(getattr(self, name)))
        tokens = sorted(self.vocab, key=self.vocab.__getitem__)
        (folder / "vocab.json").write_text(json.dumps(tokens, ensure_ascii=False), encoding="utf-8")
        (folder / "ids.json").write_text(json.dumps(self.ids, ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, folder: Path) -> Segment:
        """Read a saved segment, its arrays memory-mapped (processes on one machine share their pages)."""
        arrays = {name: np.load(folder / f"{name}.npy", mmap_mode="r") for name in _ARRAYS}
        tokens = json.loads((folder / "vocab.json").read_text(encoding="utf-8"))
        ids = json.loads((folder / "ids.json").read_text(encoding="utf-8"))
        if len(arrays["indptr"]) != len(tokens) + 1 or len(arrays["lengths"]) != len(ids):
            raise ValueError(f"keyword segment {folder.name} is inconsistent")
        return cls(folder.name, ids, {token: i for i, token in enumerate(tokens)}, **arrays)


def _assembled(
    name: str,
    ids: list[str],
    vocab: dict[str, int],
    postings: tuple[np.ndarray, np.ndarray, np.ndarray],
    lengths: np.ndarray,
) -> Segment:
    """A segment from its postings (columns, rows, counts) already in column-then-row order."""
    columns, rows, counts = postings
    indptr = np.zeros(len(vocab) + 1, dtype=np.int64)
    np.cumsum(np.bincount(columns, minlength=len(vocab)), out=indptr[1:])
    tf = np.minimum(counts, TF_MAX).astype(np.uint16)
    return Segment(name, ids, vocab, indptr, rows.astype(np.int32), tf, lengths.astype(np.int32))


def build_segment(name: str, tokenised: Sequence[tuple[str, str]], slice_size: int = 8192) -> Segment:
    """A segment over (chunk id, space-joined tokens) pairs; an id given twice keeps its last tokens.

    Documents are split and mapped to vocabulary ids a slice at a time: holding every token of 100k
    chunks as a string at once made the build slower and its memory peak higher.
    """
    latest = dict(tokenised)
    ids = list(latest)
    vocab: dict[str, int] = {}
    cols: list[np.ndarray] = []
    lengths = np.zeros(len(ids), dtype=np.int64)
    for start in range(0, len(ids), slice_size):
        corpus = [
            [t for t in latest[chunk_id].split(" ") if t] for chunk_id in ids[start : start + slice_size]
        ]
        for token in dict.fromkeys(itertools.chain.from_iterable(corpus)):
            vocab.setdefault(token, len(vocab))
        lengths[start : start + len(corpus)] = [len(tokens) for tokens in corpus]
        count = int(lengths[start : start + len(corpus)].sum())
        tokens = itertools.chain.from_iterable(corpus)
        cols.append(np.fromiter(map(vocab.__getitem__, tokens), dtype=np.int64, count=count))
    flat = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)
    rows = np.repeat(np.arange(len(ids), dtype=np.int64), lengths)
    n_rows = max(len(ids), 1)
    keys, counts = np.unique(flat * n_rows + rows, return_counts=True)  # column, then row; repeats counted
    columns, posting_rows = np.divmod(keys, n_rows)
    return _assembled(name, ids, vocab, (columns, posting_rows, counts), lengths)


def merge_segments(name: str, parts: Sequence[tuple[Segment, np.ndarray]]) -> Segment:
    """One segment holding the rows of each (segment, alive mask) whose mask is True, in order."""
    vocab: dict[str, int] = {}
    ids: list[str] = []
    all_cols, all_rows, all_tf, all_lengths = [], [], [], []
    for segment, alive in parts:
        tokens = sorted(segment.vocab, key=segment.vocab.__getitem__)
        column_map = np.fromiter(
            (vocab.setdefault(token, len(vocab)) for token in tokens), dtype=np.int64, count=len(tokens)
        )
        new_row = np.cumsum(alive, dtype=np.int64) - 1 + len(ids)
        columns = np.repeat(np.arange(len(tokens), dtype=np.int64), np.diff(segment.indptr))
        rows = np.asarray(segment.rows, dtype=np.int64)
        keep = alive[rows]
        all_cols.append(column_map[columns[keep]])
        all_rows.append(new_row[rows[keep]])
        all_tf.append(np.asarray(segment.tf)[keep])
        all_lengths.append(np.asarray(segment.lengths)[alive])
        ids.extend(itertools.compress(segment.ids, alive.tolist()))
    cols = np.concatenate(all_cols) if all_cols else np.zeros(0, dtype=np.int64)
    rows = np.concatenate(all_rows) if all_rows else np.zeros(0, dtype=np.int64)
    tf = np.concatenate(all_tf) if all_tf else np.zeros(0, dtype=np.uint16)
    n_rows = max(len(ids), 1)
    order = np.argsort(cols * n_rows + rows, kind="stable")
    lengths = np.concatenate(all_lengths) if all_lengths else np.zeros(0, dtype=np.int32)
    return _assembled(name, ids, vocab, (cols[order], rows[order], tf[order]), lengths)
