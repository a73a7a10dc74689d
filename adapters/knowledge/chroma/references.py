"""Resolving what evidence refers to into a dataset's paragraphs: cited articles, documents named by title.

A reference (core.retrieval.references) names a document by its title, or the citing paragraph's own
document, and maybe an article. Here titles are matched against the catalog (a document's own title, or its
name without extension and version date: "行政诉讼法(2017-06-27).md" is "行政诉讼法"; a cited title matches a
document whose title equals it or ends with it, "《行政诉讼法》" finds "中华人民共和国行政诉讼法"), and the
documents a paragraph *mentions* by title count as references too (the bridge of most English multi-hop
questions: "... directed by Scott Derrickson" names the page "Scott Derrickson"). An article is the paragraph
of the document that holds it (a line starting "第N条"), with the paragraphs continuing it when it is split over
several (their `within`); a document named without an article gives its paragraph closest in meaning to the
question. Every function here blocks (Chroma): callers run them in worker threads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from adapters.knowledge.chroma.catalog import CatalogEntry
from adapters.knowledge.chroma.dataset import WRITE_BATCH, DatasetHandle, chunk_text, visible_hit
from core.models import Hit
from core.retrieval.references import (
    SELF,
    Reference,
    cites_article,
    continues_article,
    normal_title,
    references_in,
)

MIN_TITLE_CHARS = 4  # a shorter title ("法", "Art") is too common a string to be a mention
MIN_LATIN_TITLE_WORDS = 2  # a one-word Latin title ("Paris") is mentioned by chance too often
_CJK = re.compile(r"[\u3400-\u9fff]")
_SPACE = re.compile(r"\s+")
_WORD = re.compile(r"\w+")
_QUALIFIER = re.compile(r"\s*[(（][^()（）]{1,40}[)）]\s*$")  # a trailing "(film)", "（2016年电影）"


@dataclass(frozen=True, slots=True)
class TitleIndex:
    """A dataset's documents by normalised title (and name), for references and mentions.

    Mentions are found through the titles' first word (Latin) or first two characters (CJK): a text is
    checked only against the titles that start with one of its words or character pairs.
    """

    by_title: dict[str, list[CatalogEntry]]
    by_start: dict[str, list[str]]

    @classmethod
    def of(cls, entries: Iterable[CatalogEntry]) -> TitleIndex:
        by_title: dict[str, list[CatalogEntry]] = {}
        for entry in entries:
            if not entry.info.enabled:
                continue
            for name in dict.fromkeys((normal_title(entry.title), normal_title(entry.info.name))):
                if name:
                    by_title.setdefault(name, []).append(entry)
        for name in list(by_title):  # "Doctor Strange (film)" is mentioned as "Doctor Strange"
            bare = _QUALIFIER.sub("", name)
            if bare != name and bare:
                by_title.setdefault(bare, [])
                by_title[bare] = list(dict.fromkeys([*by_title[bare], *by_title[name]]))
        by_start: dict[str, list[str]] = {}
        for name in by_title:
            if _mentionable(name):
                by_start.setdefault(_start(name), []).append(name)
        return cls(by_title, by_start)

    def named(self, title: str) -> list[CatalogEntry]:
        """Documents a cited title names: its exact title, else titles that end with it."""
        key = normal_title(title)
        if len(key) < 2:
            return []
        exact = self.by_title.get(key)
        if exact:
            return list(dict.fromkeys(exact))
        found = [entry for name, entries in self.by_title.items() if name.endswith(key) for entry in entries]
        return list(dict.fromkeys(found))

    def mentioned_in(self, text: str) -> list[CatalogEntry]:
        """Documents whose title the text contains as a whole word (titles long enough to mean something), in
        the order the text first mentions them (the same order in every process: no set order)."""
        folded = _SPACE.sub(" ", text).lower()
        starts = set(_WORD.findall(folded)) | {folded[i : i + 2] for i in range(len(folded) - 1)}
        mentions: list[tuple[int, str]] = []
        for start in starts & self.by_start.keys():
            for name in self.by_start[start]:
                if name not in folded:
                    continue
                if not _CJK.search(name) and not re.search(rf"(?<!\w){re.escape(name)}(?!\w)", folded):
                    continue
                mentions.append((folded.index(name), name))
        return list(dict.fromkeys(entry for _, name in sorted(mentions) for entry in self.by_title[name]))


def _start(name: str) -> str:
    """What a title is looked up by: its first two characters (CJK) or its first word."""
    if _CJK.search(name[:1]):
        return name[:2]
    words = _WORD.findall(name)
    return words[0] if words else name[:2]


def _mentionable(name: str) -> bool:
    if _CJK.search(name):
        return len(name) >= MIN_TITLE_CHARS
    return len(name.split()) >= MIN_LATIN_TITLE_WORDS


@dataclass(frozen=True, slots=True)
class Target:
    """A resolved reference: the document, and the article asked for (None: its best paragraph)."""

    entry: CatalogEntry
    article: int | None


def targets(handle: DatasetHandle, index: TitleIndex, evidence: Sequence[Hit]) -> list[Target]:
    """The documents (and articles) the evidence of this dataset refers to or mentions, in evidence order."""
    found: list[Target] = []
    for hit in evidence:
        if hit.dataset != handle.name:
            continue
        own = handle.catalog.get(hit.document_id)
        for reference in references_in(hit.content):
            found.extend(_resolve(reference, own, index))
        for entry in index.mentioned_in(hit.content):
            if own is None or entry.info.document_id != own.info.document_id:
                found.append(Target(entry, None))
    return list(dict.fromkeys(found))


def _resolve(reference: Reference, own: CatalogEntry | None, index: TitleIndex) -> list[Target]:
    if reference.title == SELF:
        return [Target(own, reference.article)] if own is not None else []
    entries = index.named(reference.title)
    if not entries and reference.target:
        entries = index.named(reference.target.rsplit("/", 1)[-1])
    return [Target(entry, reference.article) for entry in entries]


def target_hits(
    handle: DatasetHandle, found: Sequence[Target], vector: np.ndarray, *, exclude: set[str], limit: int
) -> list[Hit]:
    """The paragraphs of the targets (an article's own paragraph, else the one closest to the question),
    scored by similarity to the question, then, with room left, the paragraphs continuing a cited article
    split over several; none of `exclude`, at most `limit`."""
    hits: list[Hit] = []
    continuing: list[Hit] = []
    taken = set(exclude)
    for target in found:
        if len(hits) >= limit:
            break
        chunks = _chunks(handle, target.entry)
        if target.article is not None:
            chosen = [chunk for chunk in chunks if cites_article(chunk[2], target.article)]
            later = [
                chunk
                for chunk in chunks
                if continues_article(str(chunk[1].get("within", "")), target.article)
            ]
        else:
            chosen, later = sorted(chunks, key=lambda chunk: -_cosine(vector, chunk[3]))[:1], []
        for into, picked in ((hits, chosen), (continuing, later)):
            for chunk_id, meta, _, embedding in picked:
                if chunk_id not in taken:
                    taken.add(chunk_id)
                    into.append(visible_hit(target.entry, chunk_id, None, meta, _cosine(vector, embedding)))
    return [*hits, *continuing][:limit]


def _chunks(
    handle: DatasetHandle, entry: CatalogEntry
) -> list[tuple[str, dict[str, object], str, np.ndarray]]:
    """A document's live chunks: (id, metadata, text, embedding)."""
    ids = entry.live_ids
    chunks: list[tuple[str, dict[str, object], str, np.ndarray]] = []
    for start in range(0, len(ids), WRITE_BATCH):
        got = handle.collection.get(ids=ids[start : start + WRITE_BATCH], include=["metadatas", "embeddings"])
        for chunk_id, meta, embedding in zip(got["ids"], got["metadatas"], got["embeddings"], strict=True):
            data = dict(meta or {})
            chunks.append((chunk_id, data, chunk_text(None, data), np.asarray(embedding, dtype=np.float32)))
    chunks.sort(key=lambda chunk: int(str(chunk[1].get("position", 0))))
    return chunks


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    denominator = float(np.linalg.norm(a) * np.linalg.norm(b)) or 1.0
    return round(float(np.dot(a, b)) / denominator, 6)
