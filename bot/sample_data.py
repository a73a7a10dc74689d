"""Loads the bundled sample handbook into a dataset (used by `kb demo` and a first `kb chat`)."""

from __future__ import annotations

import asyncio
from typing import Any

from adapters.knowledge.document_readers import (
    SUPPORTED_SUFFIXES,
    UnreadableDocument,
    iter_document_paths,
    read_document,
)
from bot.sample_kb import SAMPLE_DATASET, SAMPLE_KB_DIR
from bot.settings import Settings
from core.knowledge.ingest import ingest
from core.knowledge.ingest_plan import IngestSummary


async def ensure_sample_dataset(
    kb: Any, settings: Settings, *, dataset: str = SAMPLE_DATASET
) -> IngestSummary:
    """Ingest the sample documents (idempotent: unchanged files write nothing)."""
    found = await asyncio.to_thread(lambda: list(iter_document_paths([SAMPLE_KB_DIR])))
    paths = [path for path in found if path.suffix.lower() in SUPPORTED_SUFFIXES]  # not the package's .py
    model = await kb.dataset_model(dataset) or settings.embedding.model
    summary = await ingest(
        kb,
        dataset,
        paths,
        read=read_document,
        embedding_model=model,
        roots=[SAMPLE_KB_DIR],
        max_tokens=settings.ingest.chunk_tokens,
        unreadable=(UnreadableDocument, OSError, UnicodeError),
    )
    await kb.flush()
    return summary
