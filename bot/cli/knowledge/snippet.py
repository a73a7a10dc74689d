"""The snippet `kb search` shows for a hit: the sentence of the chunk that best matches the query.

A chunk often opens with an article number, a heading line or a table header, so its first characters
rarely show why it matched; the sentence sharing most of the query's content words (dictionary words, stop
words left out; the earlier sentence among ties) does. The words are cut without jieba's guessing of unknown
words (rjieba, core.text.tokenize): loading jieba took longer than the whole search.
"""

from __future__ import annotations

from adapters.extractive.language.terms import sentences
from core.text import salient_terms, tokenize

ELLIPSIS = "…"


def best_sentence(content: str, query: str) -> str:
    """The chunk's sentence sharing most query words ("…" before it when it is not the first); the whole
    chunk when no sentence shares any (a paraphrase found by meaning) or the chunk is one sentence."""
    parts = sentences(content)
    wanted = set(salient_terms(query, new_words=False))
    if len(parts) < 2 or not wanted:
        return content
    scores = [len(wanted & set(tokenize(part, new_words=False))) for part in parts]
    best = max(range(len(parts)), key=lambda at: (scores[at], -at))
    if scores[best] == 0 or best == 0:
        return content
    return ELLIPSIS + " ".join(parts[best:])
