"""`kb ingest`: read files and folders into a dataset, idempotently, with a progress bar and a summary."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from adapters.knowledge.document_readers import (
    ReadLimits,
    UnreadableDocument,
    content_hash,
    iter_document_paths,
    read_document,
)
from adapters.knowledge.factory import open_knowledge_base
from adapters.knowledge.readers.base import MB
from bot.cli.knowledge.ingest_progress import IngestReporter
from bot.cli.knowledge.writing import add_no_wait, held_for_writing
from bot.cli.reader_may_leave import output_may_close
from bot.cli.texts import phrase
from bot.settings import IngestSettings, Settings, field_bounds
from core.errors import InvalidInput
from core.knowledge.ingest import ingest
from core.knowledge.ingest_plan import IngestEvent, IngestSummary

_MIN_TOKENS, _MAX_TOKENS = field_bounds(IngestSettings.model_fields["chunk_tokens"])


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
    add_no_wait(parser)
    parser.set_defaults(handler=run_ingest)


def read_limits(settings: Settings) -> ReadLimits:
    """How big a file, and how far an archive may unpack (KB_MAX_FILE_MB, KB_MAX_ARCHIVE_MB)."""
    return ReadLimits(
        max_file_bytes=settings.ingest.max_file_mb * MB, max_archive_bytes=settings.ingest.max_archive_mb * MB
    )


def _scan(given: list[Path], limits: ReadLimits) -> tuple[list[Path], list[Path], int]:
    """The files to ingest (zip archives' members in place of the archives), the given folders (prune
    scope), and the files' total size in bytes."""

    def refused(where: str, reason: str) -> None:
        print(f"warning: skipped {where}: {reason}", file=sys.stderr)

    paths = list(iter_document_paths(given, limits=limits, on_refused=refused))
    size = 0
    for path in paths:
        with contextlib.suppress(OSError):
            size += path.stat().st_size
    return paths, [path for path in given if path.is_dir()], size


def missing_paths(given: list[Path]) -> list[Path]:
    """Paths given on the command line that do not exist."""
    return [path for path in given if not path.exists()]


def details(summary: IngestSummary) -> str:
    """The per-document counts under the summary line, and the skipped files by reason."""
    text = (
        f"documents: {summary.added} new, {summary.changed} changed, {summary.unchanged} unchanged, "
        f"{summary.removed} removed, {summary.skipped} skipped"
    )
    if summary.missing:
        text += f"; {summary.missing} no longer on disk (use --prune to delete them)"
    if summary.skipped:
        text += "\nskipped: " + ", ".join(f"{count} × {reason}" for reason, count in summary.skip_counts())
    return text


async def run_ingest(args: argparse.Namespace, settings: Settings) -> int:
    """Ingest and report every file, holding the dataset's writer lock (bot.cli.knowledge.writing); 2 on
    bad input (a missing path, the wrong model), 1 when nothing could be ingested (every file skipped,
    or none found) or, with --no-wait, when another process is writing the dataset. An output pipe that
    closes (`| head`) stops the lines, never the ingest."""
    with output_may_close():
        return await _run_ingest(args, settings)


async def _run_ingest(args: argparse.Namespace, settings: Settings) -> int:
    started = time.perf_counter()
    dataset = (args.dataset or "").strip()
    if not dataset:
        raise InvalidInput(phrase("error.empty_dataset_name"))
    missing = missing_paths(args.paths)
    if missing:
        names = ", ".join(str(path) for path in missing)
        raise InvalidInput(phrase("error.no_such_path", names=names))
    max_tokens = args.chunk_tokens if args.chunk_tokens is not None else settings.ingest.chunk_tokens
    max_tokens = max(_MIN_TOKENS, min(_MAX_TOKENS, max_tokens))
    limits = read_limits(settings)
    paths, roots, total_bytes = await asyncio.to_thread(_scan, args.paths, limits)
    if not paths:
        print(f"error: no files found in {', '.join(map(str, args.paths))}", file=sys.stderr)
        return 1
    asked = time.perf_counter()
    async with held_for_writing(args, settings, dataset):
        waited = time.perf_counter() - asked  # the summary's time is the ingest's own, not the wait
        summary = await _ingest_files(args, settings, dataset, paths, roots, total_bytes, limits, max_tokens)
    summary = replace(summary, seconds=time.perf_counter() - started - waited)
    print(summary.line())
    print(details(summary))
    if summary.ingested == 0:
        print(f"error: nothing was ingested: all {summary.files} files were skipped", file=sys.stderr)
        return 1
    return 0


async def _ingest_files(
    args: argparse.Namespace,
    settings: Settings,
    dataset: str,
    paths: list[Path],
    roots: list[Path],
    total_bytes: int,
    limits: ReadLimits,
    max_tokens: int,
) -> IngestSummary:
    """The ingest itself, with the progress reporter, under the dataset's writer lock."""
    with IngestReporter(sys.stderr, interactive=sys.stderr.isatty()) as reporter:
        reporter.start(files=len(paths), total_bytes=total_bytes, dataset=dataset)

        def on_event(event: IngestEvent) -> None:
            if event.outcome == "skipped":
                reporter.note(f"warning: skipped {event.path}: {event.reason}")
            elif event.reason:  # read, but not all of it (a scanned page)
                reporter.note(f"warning: {event.path}: {event.reason}")

        async with open_knowledge_base(settings) as kb:
            existing_model = await kb.dataset_model(dataset)
            model = args.embedding or existing_model or settings.embedding.model
            if existing_model and model != existing_model:
                raise InvalidInput(
                    phrase(
                        "error.ingested_with_other_model",
                        dataset=dataset,
                        built_with=existing_model,
                        model=model,
                    )
                )
            summary = await ingest(
                kb,
                dataset,
                paths,
                read=functools.partial(read_document, limits=limits),
                content_hash=functools.partial(content_hash, limits=limits),
                embedding_model=model,
                roots=roots,
                max_tokens=max_tokens,
                prune=args.prune,
                unreadable=(UnreadableDocument, OSError, UnicodeError),
                on_event=on_event,
                on_progress=reporter.update,
            )
            await kb.flush()
    return summary
