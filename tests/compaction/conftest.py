"""Builders for compaction tests: deterministic Chinese turns of a chosen size in an in-memory store."""

from __future__ import annotations

import pytest

from core.conversation.compaction_batches import turn_tokens
from core.models import Turn
from core.record import Record
from tests.fakes import FakeEngine, InMemoryConversationStore

CONVERSATION = "slack:T1:C1:1700000000.000100"
SENTENCES = (
    "行政复议机关应当自受理申请之日起六十日内作出决定。",
    "申请人可以委托一至二名代理人参加行政复议。",
    "材料不全的,应当一次性告知需要补正的全部内容。",
    "对决定不服的,可以依法向人民法院提起行政诉讼。",
    "审批服务中心负责统一受理并分派到各业务科室。",
    "预算执行情况需要按季度向财政部门报送。",
)


def chinese(chars: int, *, offset: int = 0) -> str:
    """Deterministic Chinese prose of about `chars` characters."""
    text = ""
    index = offset
    while len(text) < chars:
        text += SENTENCES[index % len(SENTENCES)]
        index += 1
    return text[:chars]


async def add_turns(
    store: InMemoryConversationStore,
    count: int,
    *,
    question_chars: int = 30,
    answer_chars: int = 200,
    conversation_id: str = CONVERSATION,
) -> list[Record]:
    """Store `count` answered turns, numbered in their questions so each one is recognisable."""
    records = []
    for index in range(count):
        question = f"第{index + 1}问:" + chinese(question_chars, offset=index)
        answer = f"第{index + 1}答:" + chinese(answer_chars, offset=index + 3)
        records.append(await store.answered(conversation_id, question, answer))
    return records


def as_turn(record: Record) -> Turn:
    """The history turn of an answered record."""
    return Turn(record.id, record.question, record.answer or "")


def tokens_of(records: list[Record]) -> int:
    """Estimated tokens of the records as history turns."""
    return sum(turn_tokens(as_turn(record)) for record in records)


class ProgressCounter:
    """An on_compacting callback that counts its calls."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self) -> None:
        self.calls += 1


@pytest.fixture
def store() -> InMemoryConversationStore:
    """An empty in-memory conversation store."""
    return InMemoryConversationStore()


@pytest.fixture
def engine() -> FakeEngine:
    """A scripted engine; unscripted summaries merge the turns deterministically."""
    return FakeEngine()
