"""Type-level check (run by mypy in the suite) that the fakes and adapters implement core's ports."""

from __future__ import annotations

from adapters.extractive import ExtractiveEngine
from adapters.knowledge.chroma.kb import ChromaKnowledgeBase
from adapters.models.openai_chat import OpenAIChatModel
from adapters.slack.delivery.ledger import DeliveryLedger
from adapters.slack.surfaces.catalogue import KnowledgeCatalogue
from adapters.store.backends import SqlConversationStore
from adapters.store.delivery_ledger import SqlDeliveryLedger
from core.conversation.locks import LocalConversationLock
from core.ports import (
    ChatModel,
    ConversationLock,
    ConversationStore,
    DocumentIndex,
    Engine,
    KeyTermCheck,
    KnowledgeBase,
)
from core.retrieval.checked_engine import CheckedEngine
from tests.fakes import (
    FakeChatModel,
    FakeDocumentIndex,
    FakeEngine,
    FakeKnowledgeBase,
    InMemoryConversationStore,
    InMemoryDeliveryLedger,
)


def conforming(
    store: SqlConversationStore,
    fake_store: InMemoryConversationStore,
    engine: ExtractiveEngine,
    chroma: ChromaKnowledgeBase,
    openai: OpenAIChatModel,
) -> tuple[object, ...]:
    """Assignments mypy checks against the Protocols; never called at run time."""
    stores: tuple[ConversationStore, ConversationStore] = (store, fake_store)
    ledgers: tuple[DeliveryLedger, DeliveryLedger] = (
        SqlDeliveryLedger(store.database),
        InMemoryDeliveryLedger(fake_store),
    )
    engines: tuple[Engine, Engine, Engine] = (engine, FakeEngine(), CheckedEngine(FakeEngine(), engine))
    check: KeyTermCheck = engine
    kb: tuple[KnowledgeBase, KnowledgeBase] = (chroma, FakeKnowledgeBase())
    index: tuple[DocumentIndex, DocumentIndex] = (chroma, FakeDocumentIndex())
    chat: tuple[ChatModel, ChatModel] = (openai, FakeChatModel())
    lock: ConversationLock = LocalConversationLock()
    catalogue: KnowledgeCatalogue = chroma  # the Slack Home tab and pane read the knowledge base through it
    return stores, ledgers, engines, check, kb, index, chat, lock, catalogue
