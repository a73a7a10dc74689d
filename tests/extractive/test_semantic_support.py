"""Support by meaning: a paraphrased question is covered by a sentence close to it, on the entity and quantity conditions."""

from __future__ import annotations

from adapters.extractive import ExtractiveEngine
from core.models import AnswerRequest, Completion, Hit
from tests.extractive.helpers import MeaningEmbedder

QUESTION = "被单位辞退了，多久之内可以去申请劳动仲裁？"
ANSWER = "劳动争议申请仲裁的时效期间为一年。"
NO_NUMBER = "劳动争议由劳动争议仲裁委员会负责仲裁。"
OTHER = "用人单位应当依法建立和完善劳动规章制度。"


def _hit(id: str, content: str) -> Hit:
    return Hit(
        id=id, content=content, score=0.8, dataset="laws", document_id=id, document_name="劳动争议调解仲裁法"
    )


def _embedder() -> MeaningEmbedder:
    return MeaningEmbedder(
        {
            "被单位辞退了，多久之内可以去申请劳动仲裁": [1.0, 0.0, 0.0],
            ANSWER.rstrip("。"): [0.8, 0.6, 0.0],
            NO_NUMBER.rstrip("。"): [0.85, 0.5, 0.1],
        }
    )


async def test_a_paraphrase_is_supported_by_the_sentence_closest_in_meaning() -> None:
    """Terms alone call the everyday wording unsupported; with the encoder the statute sentence supports it."""
    question = "不满十六岁的孩子可以被工厂招去打工吗？"
    statute = "禁止用人单位招用未满十六周岁的未成年人。"
    evidence = [_hit("a", statute), _hit("b", OTHER)]
    plain, _ = await ExtractiveEngine().assess(question, evidence, [question])
    assert not plain.sufficient
    embedder = _embedder()
    embedder.table[question.rstrip("？")] = [0.0, 1.0, 0.0]
    embedder.table[statute.rstrip("。")] = [0.0, 0.9, 0.3]
    engine = ExtractiveEngine(embedder=embedder)
    verdict, _ = await engine.assess(question, evidence, [question])
    assert verdict.sufficient
    pieces = [p async for p in engine.answer(AnswerRequest(question, tuple(evidence)))]
    final = pieces[-1]
    assert isinstance(final, Completion) and f"{statute} [1]" in final.text and OTHER not in final.text
    before = len(embedder.embedded)
    await engine.assess(question, evidence, [question])
    assert len(embedder.embedded) == before  # sentence vectors are cached across rounds


async def test_a_close_sentence_without_the_asked_quantity_is_no_support() -> None:
    """ "多久" is not answered by a sentence that states no duration, however close it reads."""
    engine = ExtractiveEngine(embedder=_embedder())
    verdict, _ = await engine.assess(QUESTION, [_hit("a", NO_NUMBER)], [QUESTION])
    assert not verdict.sufficient


async def test_a_close_sentence_about_another_named_subject_is_no_support() -> None:
    """A part naming an entity (a 2026 rule) needs a paragraph that names it too, however close it reads."""
    question = "2026 年的新规定里，不满十六岁的孩子可以被工厂招去打工吗？"
    statute = "禁止用人单位招用未满十六周岁的未成年人。"
    embedder = _embedder()
    embedder.table[question.rstrip("？")] = [0.0, 1.0, 0.0]
    embedder.table[statute.rstrip("。")] = [0.0, 0.9, 0.3]
    verdict, _ = await ExtractiveEngine(embedder=embedder).assess(question, [_hit("a", statute)], [question])
    assert not verdict.sufficient
