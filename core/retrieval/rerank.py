"""The default local reranker: lexical, vector and retrieval evidence fused, plus a bridge-link bonus.

For candidates ``d_1..d_N`` and the full (rewritten) question ``q``, each signal in [0, 1]:

* ``lex``: BM25 of q's salient terms (core.text, jieba for Chinese) over the candidate pool itself,
  ``sum_t idf(t) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avglen))`` with
  ``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))``, k1 = 1.2, b = 0.75, divided by the pool's best value
  (all zero when no candidate shares a term).
* ``vec``: cosine similarity of the candidate to q, clamped to [0, 1]; only with an Embedder (q embedded
  once, the candidates in one batch).
* ``ret``: the hit's retrieval score, clamped to [0, 1]: how well it matched the query that found it.
  A follow-up round's paragraph often shares few words with the full question (it answers the bridge,
  not the question), so its own query's score must count.

``base = (w_lex * lex + w_vec * vec + w_ret * ret) / (w_lex + w_vec + w_ret)`` with w_lex = 0.5 and
w_ret = 0.5 (without an embedder), or 0.4 / 0.3 / 0.3 (with one). Then the bridge link: a candidate
whose document name (trailing "(...)" and file extension removed) is mentioned in another candidate's
text is the entity that candidate points to (multi-hop evidence):
``score = (base + w_link * max(base of candidates mentioning it)) / (1 + w_link)``, w_link = 0.5.

Hits come back best first with that score; equal scores are ordered by id, so the result is
deterministic. Tokenisation and matching run in a worker thread.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from core.models import Hit
from core.ports import Embedder
from core.text import salient_terms, tokenize

K1 = 1.2
B = 0.75
MIN_NAME_CHARS = 3
_SUFFIX = re.compile(
    r"\s*(?:\([^()]*\)|（[^（）]*）)\s*$|\.(?:md|markdown|txt|html?|pdf|docx?)$", re.IGNORECASE
)


def _hit_text(hit: Hit) -> str:
    return " ".join(part for part in (hit.document_name, hit.heading, hit.content) if part)


def _unit(value: float) -> float:
    return min(1.0, max(0.0, value))


def lexical_scores(question_terms: Sequence[str], documents: Sequence[Sequence[str]]) -> list[float]:
    """BM25 of the question terms against each tokenised document, over this pool, scaled to [0, 1]."""
    count = len(documents)
    if count == 0:
        return []
    terms = list(dict.fromkeys(question_terms))
    frequencies = [Counter(doc) for doc in documents]
    lengths = [len(doc) for doc in documents]
    average = (sum(lengths) / count) or 1.0
    idf = {
        term: math.log(1 + (count - df + 0.5) / (df + 0.5))
        for term in terms
        if (df := sum(1 for other in frequencies if term in other))
    }
    raw: list[float] = []
    for freq, length in zip(frequencies, lengths, strict=True):
        total = 0.0
        for term, weight in idf.items():
            tf = freq.get(term, 0)
            if tf:
                total += weight * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / average))
        raw.append(total)
    best = max(raw)
    return [value / best if best > 0 else 0.0 for value in raw]


def document_title(document_name: str) -> str:
    """A document's title: its name without file extension or trailing "(...)" qualifiers."""
    name = document_name.strip()
    previous = None
    while previous != name:
        previous = name
        name = _SUFFIX.sub("", name).strip()
    return name


def link_name(document_name: str) -> str:
    """The name other paragraphs would use for a document: its title, lowercased."""
    return document_title(document_name).lower()


def link_names(hit: Hit) -> set[str]:
    """The names other paragraphs would use for a hit's document: its title from the document name and
    from the document's own first heading (file names often carry suffixes such as "-2b1e0c")."""
    names = {link_name(hit.document_name)}
    heading = hit.heading.split(" > ", 1)[0].strip()
    if heading:
        names.add(link_name(heading))
    return {name for name in names if len(name) >= MIN_NAME_CHARS or (len(name) >= 2 and not name.isascii())}


def linked_by(hits: Sequence[Hit]) -> list[list[int]]:
    """For each hit, the indexes of the other hits whose text mentions its document's name."""
    names = [link_names(hit) for hit in hits]
    texts = [f"{hit.heading}\n{hit.content}".lower() for hit in hits]
    return [
        [
            other
            for other, text in enumerate(texts)
            if other != index and not names[other] & own and any(name in text for name in own)
        ]
        for index, own in enumerate(names)
    ]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors (0 when either is all zeros)."""
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm > 0 else 0.0


def fuse_scores(
    hits: Sequence[Hit],
    signals: Sequence[tuple[float, Sequence[float]]],
    links: Sequence[Sequence[int]],
    *,
    link_weight: float,
) -> list[Hit]:
    """Hits rescored by the weighted signals plus the bridge-link bonus, best first, ties by id."""
    total_weight = sum(weight for weight, _ in signals) or 1.0
    base = [
        sum(weight * _unit(values[index]) for weight, values in signals) / total_weight
        for index in range(len(hits))
    ]
    scores = [
        (base[index] + link_weight * max((base[other] for other in links[index]), default=0.0))
        / (1 + link_weight)
        for index in range(len(hits))
    ]
    rescored = [replace(hit, score=round(score, 6)) for hit, score in zip(hits, scores, strict=True)]
    return sorted(rescored, key=lambda hit: (-hit.score, hit.id))


def _lexical_and_links(question: str, hits: Sequence[Hit]) -> tuple[list[float], list[list[int]]]:
    documents = [tokenize(_hit_text(hit)) for hit in hits]
    return lexical_scores(salient_terms(question), documents), linked_by(hits)


class LocalReranker:
    """Reranker with no service (see the module docstring for the formula)."""

    def __init__(
        self,
        embedder: Embedder | None = None,
        *,
        lexical_weight: float | None = None,
        vector_weight: float | None = None,
        retrieval_weight: float | None = None,
        link_weight: float = 0.5,
    ) -> None:
        self._embedder = embedder
        defaults = (0.4, 0.3, 0.3) if embedder is not None else (0.5, 0.0, 0.5)
        chosen = (lexical_weight, vector_weight if embedder is not None else 0.0, retrieval_weight)
        self._lexical, self._vector, self._retrieval = (
            max(0.0, default if value is None else value)
            for value, default in zip(chosen, defaults, strict=True)
        )
        self._link = max(0.0, link_weight)

    @property
    def name(self) -> str:
        """Method name recorded in the trace."""
        return "local+vector" if self._embedder is not None else "local"

    async def rerank(self, question: str, hits: Sequence[Hit]) -> list[Hit]:
        """All hits, reordered against the full question."""
        if not hits:
            return []
        lexical, links = await asyncio.to_thread(_lexical_and_links, question, hits)
        signals: list[tuple[float, Sequence[float]]] = [
            (self._lexical, lexical),
            (self._retrieval, [hit.score for hit in hits]),
        ]
        if self._embedder is not None:
            query_vector = await self._embedder.embed_query(question)
            vectors = await self._embedder.embed_documents([_hit_text(hit) for hit in hits])
            signals.append((self._vector, [cosine(query_vector, vector) for vector in vectors]))
        return fuse_scores(hits, signals, links, link_weight=self._link)
