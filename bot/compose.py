"""The single composition root: builds every adapter from Settings and wires the pipeline."""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

from adapters.embedders.local import LocalEmbedder
from adapters.extractive import ExtractiveEngine
from adapters.knowledge.factory import EmbedderRegistry, open_knowledge_base
from adapters.store.backends import open_store
from bot.settings import Settings
from core.answering.llm_engine import LlmEngine
from core.conversation.compaction import CompactingContextLoader, compact_conversation
from core.conversation.locks import LocalConversationLock
from core.knowledge.search import SearchTiers
from core.models import CompactionReport, RetrievalMode, SearchMode
from core.pipeline import Pipeline, PipelineLimits
from core.ports import ConversationLock, ConversationStore, Engine, Reranker
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
    store: ConversationStore
    lock: ConversationLock
    kb: Any  # ChromaKnowledgeBase: KnowledgeBase + DocumentIndex + list_datasets()
    engine: Engine
    pipeline: Pipeline
    loader: CompactingContextLoader

    async def compact(self, conversation_id: str) -> CompactionReport:
        """Manual compaction (kb compact, the Slack thread action)."""
        return await compact_conversation(conversation_id, loader=self.loader, lock=self.lock)


def build_engine(settings: Settings) -> tuple[Engine, Engine | None]:
    """The engine, and the extractive fallback used when the model fails (None when already extractive).

    A model's assessor is checked against the extractive key-term check (core.retrieval.checked_engine).
    """
    extractive = ExtractiveEngine(coverage_threshold=settings.kb_coverage_threshold, embedder=LocalEmbedder())
    if settings.uses_extractive_engine:
        return extractive, None
    from adapters.models.openai_chat import OpenAIChatModel

    def model(name: str, *, deadline: float) -> OpenAIChatModel:
        return OpenAIChatModel(
            base_url=settings.openai_base_url,
            api_key=settings.openai_api_key,
            model=name,
            timeout=settings.kb_model_timeout,
            first_token_timeout=settings.kb_model_first_token_timeout,
            deadline=deadline,
            context_tokens=settings.kb_model_context_tokens or None,
            retries=settings.kb_model_retries,
        )

    # One client per role family even for one model: the answer and the auxiliary roles have their own deadline.
    chat = model(settings.chat_model, deadline=settings.kb_answer_deadline)
    aux = model(settings.aux_model, deadline=settings.kb_model_deadline)
    engine = CheckedEngine(
        LlmEngine(chat=chat, aux=aux, answer_max_tokens=settings.kb_answer_max_tokens), check=extractive
    )
    # The extractive engine is always the rewrite fallback; it answers only when KB_ANSWER_FALLBACK allows.
    return engine, extractive


def engine_notice(settings: Settings) -> str | None:
    """The line a command that answers prints when answers will be extractive, naming why; else None."""
    reason = settings.extractive_reason
    if reason is None:
        return None
    return f"kb: {reason}; answering with the offline extractive engine (quotes from the sources, no LLM)."


def build_reranker(settings: Settings) -> tuple[Reranker, Reranker | None]:
    """The final reranker: the HTTP rerank API when configured (local fusion as its fallback), else local."""
    # Lexical + retrieval-score fusion; embedding the candidates again measured no gain on HotpotQA.
    local = LocalReranker()
    if settings.kb_rerank_url:
        from adapters.models.http_reranker import HttpReranker

        reranker = HttpReranker(
            settings.kb_rerank_url, model=settings.kb_rerank_model, api_key=settings.kb_rerank_api_key
        )
        return reranker, local
    return local, None


def search_policy(settings: Settings) -> SearchPolicy:
    """Query-length tiers from settings (docs/design.md#query-length-tiers)."""
    return SearchPolicy(
        tiers=SearchTiers(
            short_length=settings.kb_short_query_length,
            topk_short=settings.kb_topk_short,
            topk_medium=settings.kb_topk_medium,
            topk_long=settings.kb_topk_long,
            min_score_short=settings.kb_min_score_short,
            min_score_default=settings.kb_min_score_default,
        )
    )


async def _open_lock(settings: Settings, stack: AsyncExitStack) -> ConversationLock:
    if settings.database_url.startswith(("postgres://", "postgresql://")):
        from adapters.store.pg_lock import PostgresConversationLock

        lock = await PostgresConversationLock.connect(settings.database_url)
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
        settings.kb_home.mkdir(parents=True, exist_ok=True)
        store = await open_store(settings.database_url)
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
        if settings.kb_classifier_url:
            from adapters.models.classifier_client import HttpComplexityClassifier

            classifier = HttpComplexityClassifier(
                settings.kb_classifier_url,
                timeout=settings.kb_classifier_timeout,
                retry_after=settings.kb_classifier_retry_after,
            )
            stack.push_async_callback(classifier.aclose)
        retriever = IterativeRetriever(
            kb=kb,
            engine=engine,
            reranker=reranker,
            fallback_reranker=fallback_reranker,
            classifier=classifier,
            classifier_timeout=settings.kb_classifier_timeout,
            key_terms=key_terms,
            policy=search_policy(settings),
            limits=LoopLimits(
                max_rounds=settings.kb_agent_max_rounds,
                evidence_tokens=settings.kb_agent_evidence_tokens,
                max_paragraphs=settings.kb_agent_max_paragraphs,
                queries_per_round=settings.kb_agent_queries_per_round,
                candidates_per_round=settings.kb_agent_candidates_per_round,
                first_round_depth=settings.kb_first_search_depth,
            ),
        )
        loader = CompactingContextLoader(
            store=store,
            engine=engine,
            dialogue_number=settings.kb_dialogue_number,
            recent_tokens=settings.kb_context_recent_tokens,
        )
        pipeline = Pipeline(
            store=store,
            lock=lock,
            context_loader=loader,
            retriever=retriever,
            engine=engine,
            fallback_engine=fallback_engine,
            compactor=lambda conversation_id: compact_conversation(conversation_id, loader=loader, lock=lock),
            limits=PipelineLimits(
                question_max_tokens=settings.kb_question_max_tokens,
                search_mode=_search_mode(settings.kb_search_mode),
                retrieval_mode=_retrieval_mode(settings.kb_retrieval_mode),
                answer_fallback=settings.kb_answer_fallback,
            ),
        )
        yield Services(settings, store, lock, kb, engine, pipeline, loader)


def _search_mode(value: str) -> SearchMode:
    return "embedding" if value == "embedding" else "keywords" if value == "keywords" else "blend"


def _retrieval_mode(value: str) -> RetrievalMode:
    return "single" if value == "single" else "multi" if value == "multi" else "auto"


async def resolve_datasets(
    services: Services, requested: Sequence[str], *, sample_if_empty: bool = False
) -> tuple[str, ...]:
    """Datasets to search: the requested ones, else KB_DATASETS, else every dataset in the knowledge base.

    With sample_if_empty and no dataset at all, the bundled sample handbook is ingested and used.
    """
    if requested:
        return tuple(dict.fromkeys(requested))
    if services.settings.kb_datasets:
        return tuple(services.settings.kb_datasets)
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
