"""Scale benchmark: what a store of 10k, 100k or 1M chunks costs, with the embedder out of the measurement.

Run: python tests/benchmarks/bench_scale.py [--sizes 10000 100000 1000000] [--skip-serve] [--chroma-server]

For each size, on a corpus of CMRC sentences recombined into law-corpus-like chunks with precomputed
vectors (tests/benchmarks/bench_kb.py: write_corpus, the lookup embedder, the same question set):

* ingest excluding embedding, beside embedded Chroma alone upserting the same records in the same run
  (bench_kb.chroma_alone), and the ratio of the two;
* search p50 / p95 per mode (embedding, keywords, blend) over 200 questions after 10 warm-ups;
* adding 1,000 chunks to the store of that size: the ingest of 19 new files plus the flush that makes them
  searchable (the keyword index included);
* cold start: a new process opening the store and answering its first search (the query embedded by the
  real offline encoder, as `kb search` does), wall time from the interpreter's start;
* `kb serve`'s resident memory (HTTP mode, against the mock Slack Web API of the tests): idle once its
  datasets are warm, and its peak while answering 8 questions sent at once; with ``--chroma-server`` the
  same again with the store served by a Chroma server (`chroma run` over the same folder, KB_CHROMA_URL),
  where the vector index lives in the server process, whose peak is printed beside it.

Printed as one table per run with the goals (1M: search p95 <= 50 ms in every mode, adding 1,000 chunks
<= 5 s, `kb serve` resident memory <= 2 GB, ingest >= 90 % of Chroma alone). Data is read in place.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Literal

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from adapters.knowledge.document_readers import UnreadableDocument, iter_document_paths, read_document  # noqa: E402
from core.knowledge.ingest import ingest  # noqa: E402
from core.models import SearchRequest  # noqa: E402
from tests.benchmarks.bench_kb import (  # noqa: E402
    MODEL,
    LookupEmbedder,
    chroma_alone,
    cmrc_sentences,
    kb_ingest,
    percentile,
    write_corpus,
)
from tests.chroma_server import running_chroma  # noqa: E402

MODES: tuple[Literal["embedding", "keywords", "blend"], ...] = ("embedding", "keywords", "blend")
ADDED_CHUNKS = 1000
CONCURRENT_QUESTIONS = 8
GOALS = {"p95_ms": 50.0, "add_1000_s": 5.0, "serve_rss_mb": 2048.0, "share_of_chroma": 0.90}

COLD_START = """
import asyncio, sys, time
started = time.perf_counter()
sys.path.insert(0, {root!r})
from bot.settings import Settings
from adapters.knowledge.factory import open_knowledge_base
from core.models import SearchRequest
async def main():
    async with open_knowledge_base(Settings()) as kb:
        opened = time.perf_counter()
        await kb.search(SearchRequest({question!r}, ("bench",), mode="blend", limit=10))
        print(time.perf_counter() - opened)
asyncio.run(main())
"""


def _rss_mb(pid: int, field: str = "VmRSS") -> float:
    """A process's resident memory (VmRSS) or its peak (VmHWM), in MB, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


async def _searches(kb: Any, questions: list[str]) -> dict[str, tuple[float, float]]:
    found: dict[str, tuple[float, float]] = {}
    for mode in MODES:
        latencies = []
        for number, question in enumerate(questions):
            started = time.perf_counter()
            await kb.search(SearchRequest(question, ("bench",), mode=mode, limit=10))
            if number >= 10:
                latencies.append((time.perf_counter() - started) * 1000)
        found[mode] = (statistics.median(latencies), percentile(latencies, 0.95))
    return found


async def _add_chunks(kb: Any, folder: Path, embedder: LookupEmbedder) -> tuple[float, int]:
    """Ingest about ADDED_CHUNKS new chunks into the open store and flush: (seconds, chunks added)."""
    embedder.add(write_corpus(folder, ADDED_CHUNKS, seed=11))
    paths = list(iter_document_paths([folder]))
    started = time.perf_counter()
    summary = await ingest(
        kb,
        "bench",
        paths,
        read=read_document,
        embedding_model=MODEL,
        roots=[folder],
        unreadable=(UnreadableDocument, OSError, UnicodeError),
    )
    await kb.flush()
    return time.perf_counter() - started, summary.chunks_added


def _cold_start(home: Path, question: str) -> tuple[float, float]:
    """(wall s from process start to the first search's answer, s of opening + first search alone)."""
    env = {**os.environ, "KB_HOME": str(home)}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", COLD_START.format(root=str(ROOT), question=question)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return time.perf_counter() - started, float(done.stdout.strip().splitlines()[-1])


async def _serve_memory(
    home: Path, questions: list[str], *, chroma_url: str | None = None
) -> tuple[float, float]:
    """(idle MB once warm, peak MB while answering CONCURRENT_QUESTIONS at once) of `kb serve`, over the
    embedded store or, with chroma_url, over a Chroma server holding it."""
    import aiohttp

    from tests.slack.mock_slack_api import MockSlackApi
    from tests.slack.serve_support import event_body, signed_headers, start_kb_serve

    # events the store's conversations already hold (an earlier run on this home) would be skipped as repeats
    day = 1900 if chroma_url else 1800
    mock = await MockSlackApi().start()
    env = {**os.environ, "KB_HOME": str(home), "KB_MODEL": "extractive"}
    if chroma_url:
        env["KB_CHROMA_URL"] = chroma_url
    server, base = await start_kb_serve(env, mock)
    try:
        await asyncio.sleep(5)  # the datasets warm up in the background after /healthz answers
        idle = _rss_mb(server.pid)
        async with aiohttp.ClientSession() as http:
            bodies = [
                event_body(
                    f"EvScale{day}x{n}", type="app_mention", text=f"<@UBOT> {question}", ts=f"{day}.{n:06d}"
                )
                for n, question in enumerate(questions[:CONCURRENT_QUESTIONS])
            ]
            await asyncio.gather(
                *(http.post(f"{base}/slack/events", data=b, headers=signed_headers(b)) for b in bodies)
            )
            await mock.wait_for(
                lambda: (
                    sum(bool(mock.thread("C1", f"{day}.{n:06d}")) for n in range(len(bodies))) == len(bodies)
                ),
                within=600,
            )
            await asyncio.sleep(2)  # the last edits
        return idle, _rss_mb(server.pid, "VmHWM")
    finally:
        server.send_signal(signal.SIGTERM)
        await asyncio.wait_for(server.communicate(), 120)
        await mock.close()


async def bench_size(size: int, workdir: Path, *, serve: bool, server: bool = False) -> dict[str, float]:
    print(f"\n== {size:,} chunks", flush=True)
    folder = workdir / f"docs-{size}"
    table = write_corpus(folder, size)
    _, _, questions, question_vectors = cmrc_sentences()
    table.update(zip(questions, question_vectors, strict=True))
    embedder = LookupEmbedder(table)
    home = workdir / f"home-{size}"
    started = time.perf_counter()
    summary, kb = await kb_ingest(home, folder, embedder)
    net = time.perf_counter() - started - embedder.seconds
    result: dict[str, float] = {"chunks": summary.chunks_added, "ingest_per_s": summary.chunks_added / net}
    print(f"  ingest excluding embedding: {result['ingest_per_s']:,.0f} chunks/s", flush=True)
    for mode, (p50, p95) in (await _searches(kb, questions)).items():
        result[f"{mode}_p50_ms"], result[f"{mode}_p95_ms"] = p50, p95
        print(f"  search {mode:<9}: p50 {p50:6.1f} ms  p95 {p95:6.1f} ms", flush=True)
    result["add_1000_s"], added = await _add_chunks(kb, workdir / f"more-{size}", embedder)
    print(f"  adding {added:,} chunks (ingest + flush): {result['add_1000_s']:.2f} s", flush=True)
    await kb.close()
    wall, written = (await asyncio.to_thread(chroma_alone, home, workdir / f"floor-{size}"))[::2]
    result["chroma_alone_per_s"] = written / wall
    result["share_of_chroma"] = result["ingest_per_s"] / result["chroma_alone_per_s"]
    print(f"  embedded Chroma alone, same records: {result['chroma_alone_per_s']:,.0f} chunks/s", flush=True)
    (home / "conversations.sqlite3").unlink(missing_ok=True)
    result["cold_start_s"], result["cold_open_search_s"] = _cold_start(home, questions[0])
    print(f"  cold start to first search: {result['cold_start_s']:.1f} s", flush=True)
    if serve:
        result["serve_idle_mb"], result["serve_peak_mb"] = await _serve_memory(home, questions)
        print(
            f"  kb serve: {result['serve_idle_mb']:,.0f} MB idle, {result['serve_peak_mb']:,.0f} MB peak",
            flush=True,
        )
    if server:
        with running_chroma(home / "chroma", home / "chroma-server.log", within=120) as (url, pid):
            result["server_idle_mb"], result["server_peak_mb"] = await _serve_memory(
                home, questions, chroma_url=url
            )
            result["chroma_server_peak_mb"] = _rss_mb(pid, "VmHWM")
        print(
            f"  kb serve over a Chroma server: {result['server_idle_mb']:,.0f} MB idle, "
            f"{result['server_peak_mb']:,.0f} MB peak; the Chroma server's peak "
            f"{result['chroma_server_peak_mb']:,.0f} MB",
            flush=True,
        )
    shutil.rmtree(folder, ignore_errors=True)
    return result


def table(results: dict[int, dict[str, float]]) -> str:
    """The figures side by side per size, with the goals (checked at the largest size measured)."""
    rows = [
        ("ingest excl. embedding, chunks/s", "ingest_per_s", "{:,.0f}"),
        ("embedded Chroma alone, chunks/s", "chroma_alone_per_s", "{:,.0f}"),
        ("ingest / Chroma alone (goal >= 90%)", "share_of_chroma", "{:.0%}"),
        *((f"search {m} p50 / p95 ms (goal p95 <= 50)", m, "") for m in MODES),
        ("adding 1,000 chunks, s (goal <= 5)", "add_1000_s", "{:.2f}"),
        ("cold start to first search, s", "cold_start_s", "{:.1f}"),
        ("  of which opening + first search, s", "cold_open_search_s", "{:.2f}"),
        ("kb serve idle, MB", "serve_idle_mb", "{:,.0f}"),
        (f"kb serve peak, {CONCURRENT_QUESTIONS} questions, MB (goal <= 2048)", "serve_peak_mb", "{:,.0f}"),
        ("kb serve over a Chroma server idle, MB", "server_idle_mb", "{:,.0f}"),
        ("kb serve over a Chroma server peak, MB (goal <= 2048)", "server_peak_mb", "{:,.0f}"),
        ("  the Chroma server's own peak, MB", "chroma_server_peak_mb", "{:,.0f}"),
    ]
    sizes = sorted(results)
    lines = [f"{'':<52}" + "".join(f"{size:>16,}" for size in sizes)]
    for label, key, shape in rows:
        cells = []
        for size in sizes:
            figures = results[size]
            if key in MODES:
                cells.append(f"{figures[key + '_p50_ms']:.1f} / {figures[key + '_p95_ms']:.1f}")
            else:
                cells.append(shape.format(figures[key]) if key in figures else "—")
        lines.append(f"{label:<52}" + "".join(f"{cell:>16}" for cell in cells))
    if len(sizes) > 1:
        small, large = results[sizes[0]], results[sizes[-1]]
        lines.append(
            f"{sizes[-1]:,} vs {sizes[0]:,}: search blend p95 x{large['blend_p95_ms'] / small['blend_p95_ms']:.1f}, "
            f"adding 1,000 chunks x{large['add_1000_s'] / small['add_1000_s']:.1f}, "
            f"ingest rate x{large['ingest_per_s'] / small['ingest_per_s']:.2f}"
        )
    return "\n".join(lines)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--skip-serve", action="store_true", help="do not measure kb serve's memory")
    parser.add_argument(
        "--chroma-server",
        action="store_true",
        help="also measure kb serve's memory with the store behind a Chroma server (KB_CHROMA_URL)",
    )
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="kb-scale-"))
    results: dict[int, dict[str, float]] = {}
    try:
        for size in args.sizes:
            results[size] = await bench_size(
                size, workdir, serve=not args.skip_serve, server=args.chroma_server
            )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print("\n" + table(results))
    print("\n" + json.dumps({str(k): v for k, v in results.items()}, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
