"""The local reranker: lexical BM25 against the full question fused with vector or retrieval similarity."""

from __future__ import annotations

from collections.abc import Sequence

from core.models import Hit
from core.retrieval.rerank import LocalReranker, cosine, lexical_scores
from tests.retrieval.support import hit


class FakeEmbedder:
    """An Embedder with fixed vectors per text (keyword -> axis); records its calls."""

    name = "fake-embedder"
    dimension = 3

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    @staticmethod
    def _vector(text: str) -> list[float]:
        return [float("alpha" in text), float("beta" in text), float("gamma" in text)]

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(("documents", len(texts)))
        return [self._vector(text) for text in texts]

    async def embed_query(self, text: str) -> list[float]:
        self.calls.append(("query", 1))
        return self._vector(text)


def test_lexical_scores_rank_term_overlap_and_scale_to_one() -> None:
    """The document sharing more rare question terms scores highest (1.0); no overlap scores 0."""
    scores = lexical_scores(
        ["行政复议", "期限"], [["行政复议", "期限", "六十日"], ["行政复议", "机关"], ["预算"]]
    )
    assert scores[0] == 1.0 and 0 < scores[1] < 1 and scores[2] == 0.0


def test_cosine_handles_zero_vectors() -> None:
    """Cosine of parallel vectors is 1 and of a zero vector is 0."""
    assert cosine([1.0, 0.0], [2.0, 0.0]) == 1.0 and cosine([0.0, 0.0], [1.0, 0.0]) == 0.0


async def test_without_an_embedder_lexical_overlap_and_retrieval_score_are_fused() -> None:
    """A paragraph matching the question's terms beats one with a slightly higher retrieval score."""
    hits = [
        hit("a", "某乡 2026 年部门预算", score=0.6),
        hit("b", "行政复议申请期限为六十日", score=0.5),
    ]
    ranked = await LocalReranker(link_weight=0.0).rerank("行政复议的申请期限", hits)
    assert [h.id for h in ranked] == ["b", "a"]
    assert ranked[0].score == 0.5 * 1.0 + 0.5 * 0.5 and ranked[1].score == 0.5 * 0.0 + 0.5 * 0.6


async def test_a_paragraph_named_by_top_evidence_gets_the_bridge_bonus() -> None:
    """The document another candidate mentions ("Shirley Temple") rises above an equally scored stranger."""
    film = Hit(
        "film",
        "Kiss and Tell stars Shirley Temple as Corliss Archer.",
        0.9,
        "ds",
        "f",
        "Kiss and Tell (1945 film)",
    )
    person = Hit("person", "She served as Chief of Protocol.", 0.4, "ds", "p", "Shirley Temple")
    stranger = Hit("other", "She served as Chief of Protocol.", 0.4, "ds", "o", "Janet Waldo")
    ranked = await LocalReranker().rerank(
        "What position was held by the woman who portrayed Corliss Archer?", [stranger, person, film]
    )
    assert [h.id for h in ranked] == ["film", "person", "other"]
    film_base = ranked[0].score * 1.5
    assert ranked[1].score == round((ranked[2].score * 1.5 + 0.5 * film_base) / 1.5, 6)


def test_link_names_drop_qualifiers_and_extensions() -> None:
    """ "Alien (film)" links as "alien" and "行政诉讼法.md" as "行政诉讼法"."""
    from core.retrieval.rerank import link_name

    assert link_name("Alien (film)") == "alien" and link_name("行政诉讼法.md") == "行政诉讼法"
    assert link_name("Alien (film).md") == "alien"  # both, as the extractive engine's titles do


async def test_with_an_embedder_vector_similarity_to_the_question_is_used() -> None:
    """With lexical weight 0 the order follows cosine similarity; the question is embedded once, hits in one batch."""
    embedder = FakeEmbedder()
    hits = [hit("x", "beta text", score=0.99), hit("y", "alpha text", score=0.1)]
    reranker = LocalReranker(embedder, lexical_weight=0.0, retrieval_weight=0.0, link_weight=0.0)
    ranked = await reranker.rerank("alpha question", hits)
    assert [h.id for h in ranked] == ["y", "x"]
    assert embedder.calls == [("query", 1), ("documents", 2)]


async def test_ties_are_ordered_by_id_and_results_are_deterministic() -> None:
    """Equal fused scores come back in id order, the same on every call."""
    hits = [hit("c", "same", score=0.5), hit("a", "same", score=0.5), hit("b", "same", score=0.5)]
    reranker = LocalReranker()
    first = await reranker.rerank("unrelated", hits)
    assert [h.id for h in first] == ["a", "b", "c"]
    assert first == await reranker.rerank("unrelated", list(reversed(hits)))


async def test_no_candidates_give_no_hits() -> None:
    """Reranking nothing returns nothing."""
    assert await LocalReranker().rerank("q", []) == []
