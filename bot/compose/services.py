"""The services every front end needs: the store, the knowledge base, the engine and the pipeline, built from Settings."""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

from adapters.embedders.local import LocalEmbedder, LocalMeaning
from adapters.extractive import ExtractiveEngine
from adapters.knowledge.factory import EmbedderRegistry, open_knowledge_base
from adapters.slack.delivery.ledger import DeliveryLedger
from adapters.store.backends import open_store
from adapters.store.delivery_ledger import SqlDeliveryLedger
from adapters.store.source_registry import SqlSourceRegistry
from bot.settings import Settings
from core.answering.llm_engine import LlmEngine
from core.conversation.compaction import CompactingContextLoader, compact_conversation
from core.conversation.locks import LocalConversationLock
from core.knowledge.search import SearchTiers
from core.models import CompactionReport
from core.pipeline import Pipeline, PipelineLimits
from core.ports import ConversationLock, ConversationStore, Engine, Reranker, SourceRegistry
from core.retrieval.checked_engine import CheckedEngine
from core.retrieval.evidence import LoopLimits
from core.retrieval.iterative import IterativeRetriever
from core.retrieval.rerank import LocalReranker
from core.retrieval.single_search import SearchPolicy

log = logging.getLogger(__name__)


@dataclass
class Services:
    """Everything a front end needs, built once per process."""

    settings: Settings
    store: ConversationStore  # core's three roles over one database (front ends only read it)
    ledger: DeliveryLedger  # the Slack delivery ledger on the same database
    lock: ConversationLock
    kb: Any  # ChromaKnowledgeBase: KnowledgeBase + DocumentIndex + list_datasets()
    engine: Engine
    pipeline: Pipeline
    loader: CompactingContextLoader
    sources: SourceRegistry | None = None  # the synced sources' registry on the same database

    async def compact(self, conversation_id: str) -> CompactionReport:
        """Manual compaction (kb compact, the Slack thread action)."""
        return await compact_conversation(conversation_id, loader=self.loader, lock=self.lock)


def build_engine(settings: Settings) -> tuple[Engine, Engine | None]:
    """The engine, and the extractive fallback used when the model fails (None when already extractive).

    A model's assessor is checked against the extractive key-term check (core.retrieval.checked_engine).
    """
    extractive = ExtractiveEngine(
        coverage_threshold=settings.agent.coverage_threshold, embedder=LocalEmbedder()
    )
    if settings.model.uses_extractive_engine:
        return extractive, None
    from adapters.models.openai_chat import OpenAIChatModel

    def model(name: str, *, deadline: float) -> OpenAIChatModel:
        return OpenAIChatModel(
            base_url=settings.model.base_url,
            api_key=settings.model.api_key,
            model=name,
            timeout=settings.model.timeout,
            first_token_timeout=settings.model.first_token_timeout,
            deadline=deadline,
            context_tokens=settings.model.context_tokens or None,
            retries=settings.model.retries,
        )

    # One client per role family even for one model: the answer and the auxiliary roles have their own deadline.
    chat = model(settings.model.chat_model, deadline=settings.answer.deadline)
    aux = model(settings.model.aux_model, deadline=settings.model.deadline)
    engine = CheckedEngine(
        LlmEngine(chat=chat, aux=aux, answer_max_tokens=settings.answer.max_tokens), check=extractive
    )
    # The extractive engine is always the rewrite fallback; it answers only when KB_ANSWER_FALLBACK allows.
    return engine, extractive


def engine_notice(settings: Settings) -> str | None:
    """The line a command that answers prints when answers will be extractive, naming why; else None."""
    reason = settings.model.extractive_reason
    if reason is None:
        return None
    return f"kb: {reason}; answering with the offline extractive engine (quotes from the sources, no LLM)."


def build_reranker(settings: Settings) -> tuple[Reranker, Reranker | None]:
    """The final reranker: the HTTP rerank API when configured (local fusion as its fallback), else local."""
    # Lexical + retrieval-score fusion; embedding the candidates again measured no gain on HotpotQA.
    local = LocalReranker()
    if settings.rerank.url:
        from adapters.models.http_reranker import HttpReranker

        reranker = HttpReranker(
            settings.rerank.url, model=settings.rerank.model, api_key=settings.rerank.api_key
        )
        return reranker, local
    return local, None


def search_policy(settings: Settings) -> SearchPolicy:
    """Query-length tiers from settings (docs/design.md#query-length-tiers)."""
    return SearchPolicy(
        tiers=SearchTiers(
            short_length=settings.search.short_query_length,
            topk_short=settings.search.topk_short,
            topk_medium=settings.search.topk_medium,
            topk_long=settings.search.topk_long,
            min_score_short=settings.search.min_score_short,
            min_score_default=settings.search.min_score_default,
        )
    )


async def _open_lock(settings: Settings, stack: AsyncExitStack) -> ConversationLock:
    if settings.storage.effective_database_url.startswith(("postgres://", "postgresql://")):
        from adapters.store.pg_lock import PostgresConversationLock

        lock = await PostgresConversationLock.connect(settings.storage.effective_database_url)
        stack.push_async_callback(lock.close)
        return lock
    return LocalConversationLock()


@asynccontextmanager
async def build_services(
    settings: Settings,
    *,
    engine: Engine | None = None,
    fallback_engine: Engine | None = None,
    wrap_kb: Callable[[Any], Any] | None = None,
    wrap_engine: Callable[[Engine], Engine] | None = None,
) -> AsyncIterator[Services]:
    """Open the store and the knowledge base, build the engine, and wire the pipeline; close all on exit.

    wrap_kb / wrap_engine decorate the knowledge base and the engine everywhere they are used (`kb eval`
    observes searches and counts model roles this way).
    """
    async with AsyncExitStack() as stack:
        settings.storage.home.mkdir(parents=True, exist_ok=True)
        store = await open_store(settings.storage.effective_database_url)
        stack.push_async_callback(store.close)
        lock = await _open_lock(settings, stack)
        embedders = EmbedderRegistry(settings)
        stack.push_async_callback(embedders.aclose)
        kb = await stack.enter_async_context(open_knowledge_base(settings, embedders=embedders))
        if wrap_kb is not None:
            kb = wrap_kb(kb)
        if engine is None:
            engine, fallback_engine = build_engine(settings)
        # The deterministic key-term check (one search forced with retrieval_mode=single is judged by it).
        key_terms = next((e for e in (fallback_engine, engine) if isinstance(e, ExtractiveEngine)), None)
        if wrap_engine is not None:
            engine = wrap_engine(engine)
        reranker, fallback_reranker = build_reranker(settings)
        classifier = None
        if settings.classifier.url:
            from adapters.models.classifier_client import HttpComplexityClassifier

            classifier = HttpComplexityClassifier(
                settings.classifier.url,
                timeout=settings.classifier.timeout,
                retry_after=settings.classifier.retry_after,
            )
            stack.push_async_callback(classifier.aclose)
        retriever = IterativeRetriever(
            kb=kb,
            engine=engine,
            reranker=reranker,
            fallback_reranker=fallback_reranker,
            classifier=classifier,
            classifier_timeout=settings.classifier.timeout,
            key_terms=key_terms,
            references=kb,
            policy=search_policy(settings),
            limits=LoopLimits(
                max_rounds=settings.agent.max_rounds,
                evidence_tokens=settings.agent.evidence_tokens,
                max_paragraphs=settings.agent.max_paragraphs,
                queries_per_round=settings.agent.queries_per_round,
                candidates_per_round=settings.agent.candidates_per_round,
                first_round_depth=settings.agent.first_search_depth,
            ),
        )
        loader = CompactingContextLoader(
            store=store,
            engine=engine,
            dialogue_number=settings.context.dialogue_number,
            recent_tokens=settings.context.recent_tokens,
        )
        pipeline = Pipeline(
            records=store,
            lock=lock,
            context_loader=loader,
            retriever=retriever,
            engine=engine,
            fallback_engine=fallback_engine,
            compactor=lambda conversation_id: compact_conversation(conversation_id, loader=loader, lock=lock),
            limits=PipelineLimits(
                question_max_tokens=settings.context.question_max_tokens,
                search_mode=settings.search.mode,
                retrieval_mode=settings.agent.retrieval_mode,
                answer_fallback=settings.answer.fallback,
                unsupported_claims=settings.answer.unsupported_claims,
            ),
            orphan_grace=settings.slack.pending_grace,
            meaning=LocalMeaning(),
            left_out=key_terms,
        )
        ledger, sources = SqlDeliveryLedger(store.database), SqlSourceRegistry(store.database)
        yield Services(settings, store, ledger, lock, kb, engine, pipeline, loader, sources)


async def resolve_datasets(
    services: Services, requested: Sequence[str], *, sample_if_empty: bool = False
) -> tuple[str, ...]:
    """Datasets to search: the requested ones, else KB_DATASETS, else every dataset in the knowledge base.

    With sample_if_empty and no dataset at all, the bundled sample handbook is ingested and used.
    """
    if requested:
        return tuple(dict.fromkeys(requested))
    if services.settings.search.datasets:
        return tuple(services.settings.search.datasets)
    datasets = tuple(await services.kb.list_datasets())
    if datasets or not sample_if_empty:
        return datasets
    from bot.sample_data import ensure_sample_dataset
    from bot.sample_kb import SAMPLE_DATASET

    print(
        "kb: no knowledge base yet; loading the bundled sample handbook as dataset «sample».", file=sys.stderr
    )
    await ensure_sample_dataset(services.kb, services.settings)
    return (SAMPLE_DATASET,)
