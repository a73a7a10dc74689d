"""Ingest at the embedder's speed: `kb ingest FOLDER` end to end beside the embedder alone on the same texts.

Run: python tests/benchmarks/bench_ingest_rate.py [FOLDER] [--embedder NAME ...] [--threads N ...] [--files N]

For each embedder (default: the offline USE model) and document thread count (KB_EMBED_THREADS): into a
fresh home, the ingest `kb ingest` runs (core.knowledge.ingest over embedded Chroma, its reader worker
processes and keyword index), with the real embedder wrapped only to record the texts it is asked to embed,
in the calls it gets; then the embedder alone embeds the very same texts in the very same calls, with
nothing else running. Printed side by side: chunks, ingest seconds and chunks/s, the embedder's seconds and
chunks/s, and ingest as a share of the embedder's rate (goal: at least 90%). Default folder: the Chinese
law corpus (read in place). `--files N` takes the first N files (the e5 model is ~19x slower per passage).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from adapters.embedders.e5 import E5_MODEL_NAME, E5Embedder  # noqa: E402
from adapters.embedders.local import LOCAL_MODEL_NAME, LocalEmbedder  # noqa: E402
from adapters.knowledge.document_readers import iter_document_paths  # noqa: E402
from core.ports import Embedder  # noqa: E402
from tests.benchmarks.bench_kb import kb_ingest  # noqa: E402

DATA = Path(os.environ.get("KB_BENCH_DATA", "/work/shared/data"))
GOAL = 0.90


class RecordingEmbedder:
    """The real embedder, remembering the texts of every embed_documents call (nothing else changes)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.calls: list[list[str]] = []

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return await self.inner.embed_documents(texts)

    async def embed_query(self, text: str) -> list[float]:
        return await self.inner.embed_query(text)


def build(name: str, threads: int, *, own_process: bool = False) -> Embedder:
    """The embedder by name; own_process: the USE model in a process of its own, as `kb ingest` has it."""
    if name == LOCAL_MODEL_NAME:
        return LocalEmbedder(document_threads=threads, own_process=own_process)
    if name == E5_MODEL_NAME:
        return E5Embedder()
    raise SystemExit(f"unknown embedder {name!r}: {LOCAL_MODEL_NAME} or {E5_MODEL_NAME}")


async def measure(folder: Path, paths: list[Path], name: str, threads: int) -> tuple[int, float, float]:
    """(chunks embedded, ingest seconds, embedder-alone seconds) for one embedder and thread count."""
    ingesting = build(name, threads, own_process=True)
    recording = RecordingEmbedder(ingesting)
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as home:
        started = time.perf_counter()
        _, kb = await kb_ingest(Path(home), folder, recording, paths)
        ingest_seconds = time.perf_counter() - started
        await kb.close()
    close = getattr(ingesting, "aclose", None)
    if close is not None:
        await close()
    alone = build(name, threads)
    started = time.perf_counter()
    for texts in recording.calls:
        await alone.embed_documents(texts)
    alone_seconds = time.perf_counter() - started
    return sum(len(texts) for texts in recording.calls), ingest_seconds, alone_seconds


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?", default=str(DATA / "zh_laws"))
    parser.add_argument("--embedder", action="append", default=[], help=f"default {LOCAL_MODEL_NAME}")
    parser.add_argument(
        "--threads", type=int, action="append", default=[], help="KB_EMBED_THREADS (default 1)"
    )
    parser.add_argument("--files", type=int, default=0, help="only the first N files")
    args = parser.parse_args()
    folder = Path(args.folder)
    paths = sorted(iter_document_paths([folder]))
    paths = paths[: args.files] if args.files else paths
    print(f"{len(paths)} files from {folder}; {os.cpu_count()} cores", flush=True)
    header = f"{'embedder':22} {'threads':>7} {'chunks':>7} {'ingest s':>9} {'/s':>6} {'alone s':>8} {'/s':>6} {'share':>6}"
    print(header)
    for name in args.embedder or [LOCAL_MODEL_NAME]:
        for threads in args.threads or [1]:
            chunks, ingest_seconds, alone_seconds = await measure(folder, paths, name, threads)
            share = alone_seconds / ingest_seconds if ingest_seconds else 0.0
            print(
                f"{name:22} {threads:>7} {chunks:>7} {ingest_seconds:>9.1f} {chunks / ingest_seconds:>6.0f} "
                f"{alone_seconds:>8.1f} {chunks / alone_seconds:>6.0f} {share:>6.0%}"
                f"  {'meets' if share >= GOAL else 'below'} the {GOAL:.0%} goal",
                flush=True,
            )


if __name__ == "__main__":
    asyncio.run(main())
