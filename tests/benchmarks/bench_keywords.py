"""Keyword search alone at 100k and 1M chunks: the segmented index beside one bm25s matrix, in one run.

Run: python tests/benchmarks/bench_keywords.py [--sizes 100000 1000000] [--baseline-up-to 100000]

The bm25s baseline is built only up to --baseline-up-to chunks: at 1M its own builder (Python lists per
chunk) with the tokens held here went past this machine's 24 GB and was killed. Tokenising 1M chunks takes
about 25 minutes on two cores.

Chunks are CMRC sentences recombined into law-corpus-like chunks (two or three paragraphs of 150-300
characters), tokenised once as ingestion does (in worker processes, untimed). For each size:

* search p50 / p95 over 200 CMRC questions after 10 warm-ups: the segments (one segment, as after an
  ingest; and the same chunks in eight segments, as after many small changes) beside bm25s over the same
  tokens, the single matrix the index was before;
* adding 1,000 chunks and saving: the segments (a new segment and the manifest) beside a rebuilt and re-saved
  bm25s matrix, which is what a change cost before. The baseline uses bm25s's own build, several times
  slower on these chunks than the numpy build the previous index had: read it as an upper bound, and
  bench_scale.py for the before and after of the whole store;
* opening the saved index and answering a first search, in this process.

The embedder and Chroma are out of it: bench_scale.py measures the whole store. Data is read in place.
"""

from __future__ import annotations

import argparse
import multiprocessing
import random
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import bm25s
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from adapters.knowledge.keywords.index import KeywordIndex  # noqa: E402
from adapters.knowledge.keywords.scoring import BM25_B, BM25_K1  # noqa: E402
from adapters.knowledge.keywords.tokens import tokenise_texts, tokens_of  # noqa: E402
from tests.benchmarks.bench_kb import cmrc_texts, percentile  # noqa: E402

ADDED = 1000
QUESTIONS = 200
WARM_UPS = 10
SLICES = 8
GOALS = {"p95_ms": 50.0, "add_1000_s": 5.0}


def chunk_texts(sentences: list[str], count: int, seed: int) -> list[str]:
    """count chunks of two or three paragraphs of 150-300 characters of sentences picked at random."""
    rng = random.Random(seed)
    chunks = []
    for number in range(count):
        paragraphs = []
        for _ in range(rng.randint(2, 3)):
            picked, length = [], 0
            while length < 150:
                picked.append(sentences[rng.randrange(len(sentences))])
                length += len(picked[-1])
            paragraphs.append(" ".join("".join(picked)[:300].split()))
        chunks.append(f"基准文档{number // 30} 第{number % 30}节\n" + "\n\n".join(paragraphs))
    return chunks


def tokenised(texts: list[str]) -> list[str]:
    """tokens_of every text, split between the cores."""
    size = 2000
    parts = [texts[i : i + size] for i in range(0, len(texts), size)]
    with multiprocessing.get_context("spawn").Pool(max(1, (multiprocessing.cpu_count() or 2))) as pool:
        return [tokens for part in pool.map(tokenise_texts, parts) for tokens in part]


def timed_searches(search: Any, questions: list[str]) -> tuple[float, float]:
    for question in questions[:WARM_UPS]:
        search(question)
    times = []
    for question in questions[WARM_UPS : WARM_UPS + QUESTIONS]:
        started = time.perf_counter()
        search(question)
        times.append((time.perf_counter() - started) * 1000)
    return percentile(times, 0.5), percentile(times, 0.95)


def bm25s_search(retriever: Any, question: str, k: int = 30) -> list[tuple[int, float]]:
    """What the single-matrix index did per query: bm25s scores, then the k best positive ones."""
    words = [w for w in tokens_of(question).split(" ") if w in retriever.vocab_dict]
    if not words:
        return []
    scores = retriever.get_scores(words)
    positive = np.flatnonzero(scores > 0)
    if positive.size > k:
        positive = positive[np.argpartition(-scores[positive], k - 1)[:k]]
    return sorted(((int(i), float(scores[i])) for i in positive), key=lambda pair: -pair[1])


def bm25s_build(tokens: list[str]) -> Any:
    retriever = bm25s.BM25(k1=BM25_K1, b=BM25_B)
    retriever.index([joined.split(" ") for joined in tokens], show_progress=False)
    return retriever


def bench_size(
    size: int, tokens: list[str], extra: list[str], questions: list[str], work: Path, *, baseline: bool
) -> dict[str, float]:
    """The figures of one size (see the module docstring); without the bm25s figures unless baseline."""
    results: dict[str, float] = {}
    pairs = [(f"c{i}", joined) for i, joined in enumerate(tokens[:size])]
    retriever = None
    if baseline:
        print(f"  bm25s over {size:,} chunks (the single matrix, before)...", flush=True)
        retriever = bm25s_build(tokens[:size])
        results["bm25s_p50"], results["bm25s_p95"] = timed_searches(
            lambda q: bm25s_search(retriever, q), questions
        )

    print(f"  segments over {size:,} chunks (after)...", flush=True)
    one = KeywordIndex(work / f"one-{size}")
    one.add_tokenised(pairs)
    one.save()
    results["one_p50"], results["one_p95"] = timed_searches(lambda q: one.search(q, 30), questions)
    sliced = KeywordIndex()
    step = -(-size // SLICES)
    for start in range(0, size, step):
        sliced.add_tokenised(pairs[start : start + step])
        sliced.rebuild()
    results["eight_p50"], results["eight_p95"] = timed_searches(lambda q: sliced.search(q, 30), questions)
    if retriever is not None:
        results["agree_of_20"] = sum(  # the same ten best scores (ties may list other ids at the cut)
            [round(score, 4) for _, score in sliced.search(q, 10)]
            == [round(score, 4) for _, score in bm25s_search(retriever, q, 10)]
            for q in questions[:20]
        )

    started = time.perf_counter()
    one.add_tokenised((f"new{i}", joined) for i, joined in enumerate(extra))
    one.save()
    results["one_add_s"] = time.perf_counter() - started
    started = time.perf_counter()
    opened = KeywordIndex(work / f"one-{size}")
    opened.load()
    opened.search(questions[0], 30)
    results["one_open_s"] = time.perf_counter() - started
    if not baseline:
        return results

    started = time.perf_counter()
    rebuilt = bm25s_build(tokens[:size] + extra)
    folder = work / f"bm25s-{size}"
    rebuilt.save(str(folder))
    (folder / "tokens.txt").write_text("\n".join(tokens[:size] + extra), encoding="utf-8")
    results["bm25s_add_s"] = time.perf_counter() - started
    started = time.perf_counter()
    loaded = bm25s.BM25.load(str(folder), mmap=True)
    bm25s_search(loaded, questions[0])
    results["bm25s_open_s"] = time.perf_counter() - started
    return results


def table(results: dict[int, dict[str, float]]) -> str:
    sizes = sorted(results)
    rows: list[tuple[str, Callable[[dict[str, float]], str]]] = [
        (
            "search p50 / p95 ms, bm25s matrix (before)",
            lambda r: f"{r['bm25s_p50']:.1f} / {r['bm25s_p95']:.1f}",
        ),
        ("search p50 / p95 ms, one segment (after)", lambda r: f"{r['one_p50']:.1f} / {r['one_p95']:.1f}"),
        (
            "search p50 / p95 ms, eight segments (after)",
            lambda r: f"{r['eight_p50']:.1f} / {r['eight_p95']:.1f}",
        ),
        ("  p95 segments / matrix", lambda r: f"x{r['one_p95'] / r['bm25s_p95']:.2f}"),
        ("adding 1,000 chunks + save s, before", lambda r: f"{r['bm25s_add_s']:.2f}"),
        ("adding 1,000 chunks + save s, after (goal <= 5)", lambda r: f"{r['one_add_s']:.2f}"),
        ("  after / before", lambda r: f"x{r['one_add_s'] / r['bm25s_add_s']:.3f}"),
        ("open + first search s, before", lambda r: f"{r['bm25s_open_s']:.2f}"),
        ("open + first search s, after", lambda r: f"{r['one_open_s']:.2f}"),
        ("ten best scores equal to bm25s's, of 20 questions", lambda r: f"{int(r['agree_of_20'])}"),
    ]

    def shown(cell: Callable[[dict[str, float]], str], figures: dict[str, float]) -> str:
        try:
            return cell(figures)
        except KeyError:  # no baseline at this size
            return "—"

    lines = [f"{'':50}" + "".join(f"{size:>16,}" for size in sizes)]
    for label, cell in rows:
        lines.append(f"{label:50}" + "".join(f"{shown(cell, results[size]):>16}" for size in sizes))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[100_000, 1_000_000])
    parser.add_argument(
        "--baseline-up-to", type=int, default=100_000, help="bm25s beside the segments up to this size"
    )
    args = parser.parse_args()
    sentences, questions = cmrc_texts()
    questions = random.Random(3).sample(questions, WARM_UPS + QUESTIONS)
    largest = max(args.sizes)
    print(f"tokenising {largest + ADDED:,} chunks (untimed)...", flush=True)
    texts = chunk_texts([re.sub(r"\s+", " ", s) for s in sentences], largest + ADDED, seed=7)
    tokens = tokenised(texts)
    extra, tokens = tokens[largest:], tokens[:largest]
    work = Path(tempfile.mkdtemp(prefix="kb-bench-keywords-"))
    results = {}
    try:
        for size in sorted(args.sizes):
            print(f"== {size:,} chunks", flush=True)
            results[size] = bench_size(
                size, tokens, extra, questions, work, baseline=size <= args.baseline_up_to
            )
            print(table({size: results[size]}), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print()
    print(table(results))


if __name__ == "__main__":
    main()
