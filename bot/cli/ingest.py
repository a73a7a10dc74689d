"""`kb ingest`: read files and folders into a dataset, idempotently, with a progress bar and a summary."""

from __future__ import annotations

import argparse
import asyncio
import functools
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from tqdm import tqdm

from adapters.knowledge.document_readers import (
    ReadLimits,
    UnreadableDocument,
    iter_document_paths,
    read_document,
)
from adapters.knowledge.factory import open_knowledge_base
from adapters.knowledge.readers.base import MB
from bot.cli.search import print_error
from bot.settings import INT_RANGES, Settings
from core.errors import InvalidInput, KbError
from core.knowledge.ingest import ingest
from core.knowledge.ingest_plan import IngestEvent, IngestSummary

_MIN_TOKENS, _MAX_TOKENS = INT_RANGES["kb_chunk_tokens"][1:]


def register(commands: Any) -> None:
    """Add `kb ingest`."""
    parser = commands.add_parser(
        "ingest",
        help="add or update documents (Markdown, text, HTML, PDF, Word, PowerPoint, Excel, CSV, zip) in a dataset",
    )
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="files or folders (recursive)")
    parser.add_argument("--dataset", required=True, help="dataset name (created on first ingest)")
    parser.add_argument(
        "--embedding", help="embedding model (default: the dataset's, else KB_EMBEDDING_MODEL)"
    )
    parser.add_argument("--chunk-tokens", type=int, help="chunk size in tokens (default: KB_CHUNK_TOKENS)")
    parser.add_argument(
        "--prune", action="store_true", help="delete documents whose file is gone from the given folders"
    )
    parser.set_defaults(handler=run_ingest)


def read_limits(settings: Settings) -> ReadLimits:
    """How big a file, and how far an archive may unpack (KB_MAX_FILE_MB, KB_MAX_ARCHIVE_MB)."""
    return ReadLimits(
        max_file_bytes=settings.kb_max_file_mb * MB, max_archive_bytes=settings.kb_max_archive_mb * MB
    )


def _scan(given: list[Path], limits: ReadLimits) -> tuple[list[Path], list[Path]]:
    """The files to ingest (zip archives' members in place of the archives), and the given folders (prune scope)."""
    return list(iter_document_paths(given, limits=limits)), [path for path in given if path.is_dir()]


def details(summary: IngestSummary) -> str:
    """The per-document counts under the summary line."""
    text = (
        f"documents: {summary.added} new, {summary.changed} changed, {summary.unchanged} unchanged, "
        f"{summary.removed} removed, {summary.skipped} skipped"
    )
    if summary.missing:
        text += f"; {summary.missing} no longer on disk (use --prune to delete them)"
    return text


async def run_ingest(args: argparse.Namespace, settings: Settings) -> int:
    """Ingest; 0 when done (skipped files are warnings), 2 on a bad dataset/model choice."""
    started = time.perf_counter()
    dataset = (args.dataset or "").strip()
    try:
        if not dataset:
            raise InvalidInput("知识库名称不能为空。", "The dataset name must not be empty.")
        max_tokens = args.chunk_tokens if args.chunk_tokens is not None else settings.kb_chunk_tokens
        max_tokens = max(_MIN_TOKENS, min(_MAX_TOKENS, max_tokens))
        limits = read_limits(settings)
        paths, roots = await asyncio.to_thread(_scan, args.paths, limits)
        async with open_knowledge_base(settings) as kb:
            existing_model = await kb.dataset_model(dataset)
            model = args.embedding or existing_model or settings.kb_embedding_model
            if existing_model and model != existing_model:
                raise InvalidInput(
                    f"知识库「{dataset}」使用 {existing_model} 建立,不能改用 {model}。",
                    f"Dataset '{dataset}' was built with {existing_model}; it cannot be ingested with {model}.",
                )
            bar = tqdm(total=len(paths), unit="file", file=sys.stderr, disable=not sys.stderr.isatty())

            def on_event(event: IngestEvent) -> None:
                bar.update(1)
                if event.outcome == "skipped":
                    tqdm.write(f"warning: skipped {event.path}: {event.reason}", file=sys.stderr)
                elif event.reason:  # read, but not all of it (a scanned page)
                    tqdm.write(f"warning: {event.path}: {event.reason}", file=sys.stderr)

            try:
                summary = await ingest(
                    kb,
                    dataset,
                    paths,
                    read=functools.partial(read_document, limits=limits),
                    embedding_model=model,
                    roots=roots,
                    max_tokens=max_tokens,
                    prune=args.prune,
                    unreadable=(UnreadableDocument, OSError, UnicodeError),
                    on_event=on_event,
                )
            finally:
                bar.close()
            await kb.flush()
    except KbError as error:
        print_error(error)
        return 2
    summary = replace(summary, seconds=time.perf_counter() - started)
    print(summary.line())
    print(details(summary))
    return 0
