"""What a quoted sentence defers to: the article it cites ("依照本法第二十四条的规定处罚"), quoted beside it.

A sentence that settles a matter by pointing elsewhere answers nothing alone: the cited article of the
same document, or of another document named by title ("依照《中华人民共和国行政诉讼法》第四十五条"), holds
the answer. When the evidence holds that article (the loop brings cited articles in as ``reference``
sources, docs/design.md#following-references), the answer quotes it too: its sentence that answers the
part best, else its opening one. References are read with core.retrieval.references, as at retrieval.
Pure; CPU-bound (jieba): call from a worker thread.
"""

from __future__ import annotations

from collections.abc import Sequence

from adapters.extractive.language.relevance import SentenceIndex, score_sentences
from adapters.extractive.language.sentences import Sentence
from core.models import Hit
from core.retrieval.references import SELF, Reference, normal_title, opened_article, references_in

MAX_DEFERRED = 2  # cited articles quoted for one part


def deferred_sentences(
    part: str,
    evidence: Sequence[Hit],
    candidates: Sequence[Sentence],
    quoted: Sequence[Sentence],
) -> list[Sentence]:
    """For the articles the quoted sentences cite and the evidence holds (in the order cited), the
    sentence of each that answers the part best (its first one when none shares a word with it); none
    already quoted, at most MAX_DEFERRED."""
    found: list[Sentence] = []
    index: SentenceIndex | None = None  # built once, when a cited article is found
    for sentence in quoted:
        citing = evidence[sentence.source - 1]
        for reference in references_in(sentence.text):
            if len(found) >= MAX_DEFERRED:
                return found
            own = _article_sentences(reference, citing, evidence, candidates)
            if not own or any(s in quoted or s in found for s in own):
                continue
            index = index or SentenceIndex.of(evidence, candidates)
            scored = score_sentences(part, index, None, among=own)
            found.append(scored[0].sentence if scored and scored[0].words > 0 else own[0])
    return found


def _article_sentences(
    reference: Reference, citing: Hit, evidence: Sequence[Hit], candidates: Sequence[Sentence]
) -> list[Sentence]:
    """The sentences of the cited article in the first evidence paragraph holding it; [] when none does."""
    if reference.article is None:
        return []
    for index, hit in enumerate(evidence, start=1):
        if hit is citing and reference.title != SELF:
            continue
        if not _same_document(reference, citing, hit):
            continue
        own = _of_article([s for s in candidates if s.source == index], reference.article)
        if own:
            return own
    return []


def _same_document(reference: Reference, citing: Hit, hit: Hit) -> bool:
    """Whether the hit belongs to the document the reference names (SELF: the citing paragraph's own)."""
    if reference.title == SELF:
        return hit.document_id == citing.document_id
    wanted = normal_title(reference.title)
    names = {normal_title(hit.title), normal_title(hit.document_name)} - {""}
    return any(name == wanted or (len(name) >= 2 and wanted.endswith(name)) for name in names)


def _of_article(sentences: Sequence[Sentence], article: int) -> list[Sentence]:
    """The sentences from the one opening "第N条" up to the next article's opening."""
    own: list[Sentence] = []
    inside = False
    for sentence in sentences:
        opening = opened_article(sentence.text)
        if opening is not None:
            inside = opening == article
        if inside:
            own.append(sentence)
    return own
