"""Per-dataset BM25 over jieba tokens (bm25s), kept beside Chroma because local Chroma cannot score text.

bm25s has no incremental add, so the index keeps every chunk's tokens (space-joined) and rebuilds the
whole BM25 matrix after a batch of changes (about 2.4 s at 100k chunks,
docs/storage.md#bm25-beside-chroma-rebuilt-after-a-batch-of-changes). Tokens, the
bm25s matrices and the catalog signature they match are saved under one folder; a missing or stale
folder is repaired from Chroma's stored documents (server mode on a new machine). Every method is
synchronous and CPU-bound: the knowledge base calls them from worker threads.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bm25s
import numpy as np

from adapters.knowledge.bm25_build import BM25_B, BM25_K1, build_bm25
from core.knowledge.chunking import embedding_trail
from core.models import Chunk
from core.text import STOP_WORDS_EN, STOP_WORDS_ZH, tokenize

log = logging.getLogger(__name__)
STOP_WORDS = STOP_WORDS_ZH | STOP_WORDS_EN

TOKENS_FILE = "tokens.jsonl"
META_FILE = "meta.json"
BM25_DIR = "bm25"
# Index and query tokens are jieba's search-mode words without its HMM guesses of unknown words
# (tokenize(new_words=False)): on CMRC 2018 dev, BM25 recall@5 0.998 without against 0.995 with, and
# tokenising takes ~35 % less CPU, which is most of ingestion's own work (measured, see tokens_of).
TOKENIZER = (
    f"jieba-search-nohmm-nostop-2/k1={BM25_K1}/b={BM25_B}"  # saved indexes built otherwise are rebuilt
)


@dataclass(frozen=True, slots=True)
class _Snapshot:
    """An immutable built index: searches use one snapshot while a rebuild makes the next."""

    ids: tuple[str, ...]
    retriever: Any  # bm25s.BM25, or None when there are no chunks


def tokens_of(text: str) -> str:
    """A text's search tokens without stop words, space-joined (jieba tokens never contain whitespace).

    jieba's HMM is off (see TOKENIZER): a Chinese name missing from the dictionary is indexed and
    searched as the same pieces, so it still matches, and tokenising costs ~35 % less.
    """
    words = tokenize(text, new_words=False)
    return " ".join(token for token in words if token not in STOP_WORDS and " " not in token)


def tokenise_texts(texts: list[str]) -> list[str]:
    """tokens_of for many texts (a top-level function, so a worker process can run it)."""
    return [tokens_of(text) for text in texts]


def chunk_keywords(title: str, chunks: Sequence[Chunk]) -> list[str]:
    """The indexed tokens of a document's chunks: tokens_of their embedding text (title, headings, text).

    core.knowledge.ingest_plan.WorkerDocumentIndex.chunk_keywords: ingestion computes these in worker processes.
    The trail line (title > headings) is shared by many chunks, so it is tokenised once: tokens never
    span the newline that ends it (NFKC, lower-casing and jieba's blocks all break there), so
    tokens_of(trail + "\n" + text) is tokens_of(trail) followed by tokens_of(text) (tested).
    """
    trails: dict[str, str] = {}
    terms = []
    for chunk in chunks:
        trail = embedding_trail(chunk, document_title=title)
        if trail not in trails:
            trails[trail] = tokens_of(trail)
        terms.append(" ".join(part for part in (trails[trail], tokens_of(chunk.text)) if part))
    return terms


class KeywordIndex:
    """BM25 over the chunks of one dataset; thread-safe (one writer lock, lock-free snapshot reads)."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory
        self._tokens: dict[str, str] = {}
        self._snapshot = _Snapshot((), None)
        self._lock = threading.Lock()
        self.signature = ""
        self.dirty = False
        self._unsaved = False

    def __len__(self) -> int:
        return len(self._tokens)

    def ids(self) -> set[str]:
        """Ids of the chunks whose tokens are held."""
        return set(self._tokens)

    @staticmethod
    def tokenise(items: Iterable[tuple[str, str]]) -> list[tuple[str, str]]:
        """(chunk id, text) pairs as (chunk id, space-joined tokens): the CPU-heavy part of add()."""
        return [(chunk_id, tokens_of(text)) for chunk_id, text in items]

    def add(self, items: Iterable[tuple[str, str]]) -> None:
        """Tokenise and hold (chunk id, text) pairs; the BM25 matrix changes at the next rebuild()."""
        self.add_tokenised(self.tokenise(items))

    def add_tokenised(self, tokenised: Iterable[tuple[str, str]]) -> None:
        """Hold already tokenised (chunk id, joined tokens) pairs."""
        with self._lock:
            self._tokens.update(tokenised)
            self.dirty = self._unsaved = True

    def remove(self, ids: Iterable[str]) -> None:
        """Forget these chunk ids (unknown ids are ignored)."""
        with self._lock:
            for chunk_id in ids:
                if self._tokens.pop(chunk_id, None) is not None:
                    self.dirty = self._unsaved = True

    def apply(self, removed: Iterable[str], tokenised: Iterable[tuple[str, str]], signature: str) -> None:
        """Apply one document's change (tokens from tokenise()) and record the catalog signature."""
        self.remove(removed)
        self.add_tokenised(tokenised)
        with self._lock:
            self.signature = signature
            self.dirty = self._unsaved = True

    def rebuild(self) -> None:
        """Build the BM25 matrix over the held tokens and swap it in."""
        with self._lock:
            ids = tuple(self._tokens)
            documents = [self._tokens[chunk_id] for chunk_id in ids]
            self.dirty = False
        self._snapshot = _Snapshot(ids, build_bm25(documents) if ids else None)

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        """Up to k (chunk id, raw BM25 score) pairs with score > 0, best first, ties by id."""
        snapshot = self._snapshot
        if snapshot.retriever is None or k <= 0:
            return []
        words = [w for w in tokens_of(query).split(" ") if w]
        if not words:
            return []
        scores = snapshot.retriever.get_scores(words)
        positive = np.flatnonzero(scores > 0)
        if positive.size > k:
            top = np.argpartition(-scores[positive], k - 1)[:k]
            positive = positive[top]
        found = [(snapshot.ids[i], float(scores[i])) for i in positive]
        return sorted(found, key=lambda pair: (-pair[1], pair[0]))

    # ---------- persistence ----------

    def save(self) -> None:
        """Write tokens, the BM25 matrices and the signature atomically (new folder, then rename)."""
        if self.directory is None or not self._unsaved:
            return
        snapshot = self._snapshot
        with self._lock:
            tokens = dict(self._tokens)
            self._unsaved = False
        staging = self.directory.with_name(f"{self.directory.name}.tmp-{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        with (staging / TOKENS_FILE).open("w", encoding="utf-8") as handle:
            for chunk_id, joined in tokens.items():
                handle.write(json.dumps([chunk_id, joined], ensure_ascii=False) + "\n")
        if snapshot.retriever is not None and set(snapshot.ids) == set(tokens):
            snapshot.retriever.save(str(staging / BM25_DIR), show_progress=False)
            (staging / "bm25_ids.json").write_text(json.dumps(list(snapshot.ids)), encoding="utf-8")
        (staging / META_FILE).write_text(
            json.dumps({"signature": self.signature, "tokenizer": TOKENIZER}), encoding="utf-8"
        )
        previous = self.directory.with_name(f"{self.directory.name}.old-{os.getpid()}")
        if self.directory.exists():
            self.directory.rename(previous)
        staging.rename(self.directory)
        shutil.rmtree(previous, ignore_errors=True)

    @staticmethod
    def saved_state(directory: Path) -> str | None:
        """The catalog signature a saved index matches, read from its meta file alone; None when there is
        none, it cannot be read, or another tokenizer built it."""
        try:
            meta = json.loads((directory / META_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(meta, dict) or meta.get("tokenizer") != TOKENIZER:
            return None
        return str(meta.get("signature", ""))

    def load(self) -> bool:
        """Read a saved index; False (and empty) when there is none or it cannot be read."""
        if self.directory is None or not (self.directory / META_FILE).exists():
            return False
        try:
            meta = json.loads((self.directory / META_FILE).read_text(encoding="utf-8"))
            if meta.get("tokenizer") != TOKENIZER:
                log.info("keyword index %s was built with another tokenizer; rebuilding", self.directory)
                return False
            tokens: dict[str, str] = {}
            with (self.directory / TOKENS_FILE).open(encoding="utf-8") as handle:
                for line in handle:
                    chunk_id, joined = json.loads(line)
                    tokens[chunk_id] = joined
            snapshot = self._load_bm25(tokens)
        except (OSError, ValueError, KeyError) as exc:
            log.warning("keyword index %s is unreadable (%s); it will be rebuilt", self.directory, exc)
            return False
        with self._lock:
            self._tokens = tokens
            self.signature = str(meta.get("signature", ""))
            self._unsaved = False
            self.dirty = snapshot is None and bool(tokens)
        if snapshot is not None:
            self._snapshot = snapshot
        return True

    def _load_bm25(self, tokens: dict[str, str]) -> _Snapshot | None:
        assert self.directory is not None
        ids_file = self.directory / "bm25_ids.json"
        if not ids_file.exists():
            return None
        ids = tuple(json.loads(ids_file.read_text(encoding="utf-8")))
        if set(ids) != set(tokens):
            return None
        retriever = bm25s.BM25.load(str(self.directory / BM25_DIR), mmap=True, show_progress=False)
        return _Snapshot(ids, retriever)

    def sync(self, live_ids: Sequence[str], fetch_texts: Any, signature: str) -> bool:
        """Make the held tokens cover exactly live_ids, fetching missing texts; True when they changed.

        fetch_texts(ids) -> {id: text} reads the texts to index (from Chroma). The BM25 matrix is only
        marked dirty; rebuild() builds it.
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
