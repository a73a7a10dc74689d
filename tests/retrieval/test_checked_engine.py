"""A model's "sufficient" must pass the deterministic key-term check; otherwise it is overruled and traced."""

from __future__ import annotations

from collections.abc import Sequence

from adapters.extractive import ExtractiveEngine
from core.models import Assessment, Hit
from core.retrieval.checked_engine import CheckedEngine
from tests.fakes import FakeEngine
from tests.retrieval.support import Recorder, build, hit


class FixedCheck:
    """A KeyTermCheck answering from a list, recording its calls."""

    def __init__(self, *parts: str) -> None:
        self.parts = list(parts)
        self.calls: list[str] = []

    async def unsupported_parts(self, question: str, evidence: Sequence[Hit]) -> list[str]:
        self.calls.append(question)
        return self.parts


async def test_a_sufficient_verdict_with_a_part_lacking_its_key_terms_is_overruled() -> None:
    """The model says sufficient; the check finds the budget part's key terms nowhere: not sufficient."""
    model = FakeEngine()
    model.assessments.append(Assessment(sufficient=True))
    engine = CheckedEngine(model, FixedCheck("某乡 2026 年的预算金额"))
    verdict, _ = await engine.assess(
        "期限和某乡 2026 年的预算金额?", [hit("p1")], ["期限和某乡 2026 年的预算金额?"]
    )
    assert verdict == Assessment(
        sufficient=False,
        missing="资料中没有「某乡 2026 年的预算金额」的关键信息",
        queries=("某乡 2026 年的预算金额",),
        overruled=True,
    )


async def test_an_agreed_or_negative_verdict_is_the_models_own() -> None:
    """No gap found: the model's sufficient stands; a model's 'not sufficient' is never checked."""
    model = FakeEngine()
    model.assessments.extend([Assessment(sufficient=True), Assessment(sufficient=False, missing="x")])
    check = FixedCheck()
    engine = CheckedEngine(model, check)
    assert (await engine.assess("q", [hit("p1")], ["q"]))[0] == Assessment(sufficient=True)
    assert (await engine.assess("q", [hit("p1")], ["q"]))[0] == Assessment(sufficient=False, missing="x")
    assert check.calls == ["q"]


async def test_the_extractive_key_terms_catch_an_absent_entity_and_an_unstated_quantity() -> None:
    """Real check: 2026 and an amount of money appear nowhere in a paragraph about the application period."""
    evidence = [
        hit("p1", "第二十条 可以自知道该行政行为之日起六十日内提出行政复议申请", document="行政复议法")
    ]
    question = "行政复议的申请期限是多久，某乡 2026 年行政审批服务中心的预算金额是多少？"
    missing = await ExtractiveEngine().unsupported_parts(question, evidence)
    assert missing == ["某乡 2026 年行政审批服务中心的预算金额是多少"]


async def test_the_loop_traces_an_overruled_round_and_searches_the_gap() -> None:
    """Round 1's overruled verdict is marked in the trace and the unsupported part is searched in round 2."""
    model = FakeEngine()
    model.votes.append(True)
    model.assessments.extend([Assessment(sufficient=True), Assessment(sufficient=True)])
    check = FixedCheck("预算金额")
    retriever, kb, _, _ = build(engine=CheckedEngine(model, check))  # type: ignore[arg-type]
    kb.script("期限和预算金额分别是多少", [hit("p1")])
    kb.script("预算金额", [hit("p2")])
    outcome = await retriever.retrieve(
        "期限和预算金额分别是多少",
        datasets=["ds"],
        search_mode="blend",
        retrieval_mode="multi",
        emit=Recorder(),
    )
    assert outcome.trace.rounds[0].overruled is True
    assert outcome.trace.to_json()["rounds"][0]["overruled"] is True
    assert kb.queries == ["期限和预算金额分别是多少", "预算金额"]
