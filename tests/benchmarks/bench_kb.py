"""Knowledge-base benchmark: ingest throughput, search latency (10k / 100k chunks) and CMRC 2018 recall@5.

Run: /tmp/venv/bin/python tests/benchmarks/bench_kb.py [--sizes 10000 100000] [--skip-scale] [--skip-recall]

* Ingest throughput excludes embedding: vectors are computed before the clock starts and served by a
  lookup "embedder". It includes the Chroma writes, the catalog, keyword tokenisation and the final
  BM25 build + save (kb.flush()).
* Search latency excludes query embedding (query vectors are precomputed the same way): p50 / p95 over
  200 queries after 10 warm-ups, embedded Chroma.
* Recall@5 on CMRC 2018 dev with the offline embedder: each passage is one document (its title is the
  document title), a question's gold is its passage. Also compares blend fusions on the same candidates.

The synthetic scale corpus is made of CMRC sentences (dev + trial) recombined into 150-300 character
chunks; a chunk's vector is the normalised sum of its sentences' USE vectors, so the vector distribution
is that of real Chinese text. Data is read in place from /work/shared/data (or KB_BENCH_DATA).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import chromadb
import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from adapters.chroma_kb import ChromaKnowledgeBase  # noqa: E402
from adapters.local_embedder import encode  # noqa: E402
from core.chunking import embedding_text  # noqa: E402
from core.ingest import BATCH_CHUNKS  # noqa: E402
from core.models import Chunk, DocumentInfo, Hit, SearchRequest  # noqa: E402
from core.search import relative_score_fuse, rrf_fuse  # noqa: E402

DATA = Path(os.environ.get("KB_BENCH_DATA", "/work/shared/data")) / "zh_cmrc2018"
DEV = DATA / "cmrc2018_dev_squad_style.json"
TRIAL = DATA / "cmrc2018_trial_squad_style.json"
CHUNKS_PER_DOC = 50
MODEL = "use-multilingual-v3"


class LookupEmbedder:
    """Serves precomputed vectors by text, so timings exclude embedding."""

    def __init__(self, table: dict[str, np.ndarray], dimension: int = 512) -> None:
        self._table = table
        self._dimension = dimension

    @property
    def name(self) -> str:
        return MODEL

    @property
    def dimension(self) -> int:
        return self._dimension

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        # float32 rows instead of lists: the store converts with np.asarray, and .tolist() would be
        # embedding-side work that this benchmark must not time.
        return cast(list[list[float]], [self._table[text] for text in texts])

    async def embed_query(self, text: str) -> list[float]:
        return self._table[text].tolist()  # type: ignore[no-any-return]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def load_squad(path: Path) -> list[dict[str, Any]]:
    return json.loads(path.read_text(encoding="utf-8"))["data"]  # type: ignore[no-any-return]


# ---------- scale: throughput and latency ----------


def cached_encode(texts: list[str]) -> np.ndarray:
    """USE vectors of texts, cached under KB_BENCH_CACHE (default: the temp dir) between runs."""
    import hashlib

    cache = Path(os.environ.get("KB_BENCH_CACHE", Path(tempfile.gettempdir()) / "kb-bench-cache"))
    key = hashlib.sha1("\n".join(texts).encode("utf-8")).hexdigest()[:16]
    path = cache / f"use-{key}.npy"
    if path.exists():
        return np.load(path)  # type: ignore[no-any-return]
    print(f"  embedding {len(texts)} texts once (not timed; cached in {cache})...", flush=True)
    vectors = encode(texts)
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


def synthetic_corpus(size: int, seed: int = 7) -> tuple[list[str], np.ndarray, list[str], np.ndarray]:
    """size chunk texts and vectors made of CMRC sentences, plus 210 question texts and vectors."""
    sentences: list[str] = []
    questions: list[str] = []
    for path in (DEV, TRIAL):
        for article in load_squad(path):
            for paragraph in article["paragraphs"]:
                parts = re.split(r"(?<=[。！？])", paragraph["context"])
                sentences.extend(p.strip() for p in parts if len(p.strip()) >= 8)
                questions.extend(q["question"] for q in paragraph["qas"])
    sentences = sorted(set(sentences))
    rng = random.Random(seed)
    questions = rng.sample(questions, 210)
    sentence_vectors = cached_encode(sentences)
    question_vectors = cached_encode(questions)
    texts: list[str] = []
    vectors = np.zeros((size, sentence_vectors.shape[1]), dtype=np.float32)
    for i in range(size):
        picked: list[int] = []
        length = 0
        while length < 150:
            j = rng.randrange(len(sentences))
            picked.append(j)
            length += len(sentences[j])
        texts.append(f"[{i}] " + "".join(sentences[j] for j in picked)[:300])
        total = sentence_vectors[picked].sum(axis=0)
        vectors[i] = total / (np.linalg.norm(total) or 1.0)
    return texts, vectors, questions, question_vectors


async def bench_scale(size: int, workdir: Path) -> dict[str, float]:
    print(f"\n== {size:,} chunks (embedded Chroma)", flush=True)
    texts, vectors, questions, question_vectors = synthetic_corpus(size)
    home = workdir / f"scale-{size}"
    docs = [texts[i : i + CHUNKS_PER_DOC] for i in range(0, size, CHUNKS_PER_DOC)]
    title = "基准文档"
    table: dict[str, np.ndarray] = {}
    for index, group in enumerate(docs):
        for position, text in enumerate(group):
            chunk = Chunk(text, ("第一章", f"第{index}节"), position, len(text))
            table[embedding_text(chunk, document_title=f"{title}{index}")] = vectors[
                index * CHUNKS_PER_DOC + position
            ]
    for question, vector in zip(questions, question_vectors, strict=True):
        table[question] = vector
    embedder = LookupEmbedder(table)
    kb = ChromaKnowledgeBase(
        chromadb.PersistentClient(path=str(home / "chroma")),
        embedders=lambda m: embedder,
        keyword_home=home / "kw",
    )
    started = time.perf_counter()
    cpu_started = time.process_time()
    batch: list[tuple[DocumentInfo, Sequence[Chunk]]] = []
    for index, group in enumerate(docs):
        chunks = [Chunk(text, ("第一章", f"第{index}节"), p, len(text)) for p, text in enumerate(group)]
        info = DocumentInfo(
            "bench", f"doc{index:06d}", f"{title}{index}", f"/bench/{index}.md", f"h{index}", True, 0
        )
        batch.append((info, chunks))
        if len(batch) * CHUNKS_PER_DOC >= BATCH_CHUNKS or index == len(docs) - 1:  # as core.ingest does
            await kb.replace_documents("bench", batch, embedding_model=MODEL)
            batch = []
    written = time.perf_counter() - started
    await kb.flush()
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    load = os.getloadavg()[0]
    result = {
        "load_average_1min": load,
        "ingest_chunks_per_s": size / elapsed,
        "ingest_cpu_chunks_per_s": size / cpu,
        "store_write_chunks_per_s": size / written,
        "bm25_build_s": elapsed - written,
    }
    print(
        f"  ingest: {size / elapsed:,.0f} chunks/s wall ({elapsed:.1f} s; {size / cpu:,.0f} per CPU-second of this "
        f"process, tokenising runs in a worker process; load average {load:.1f} on {os.cpu_count()} cores), "
        f"writes+tokenising {written:.1f} s, BM25 build+save {elapsed - written:.1f} s",
        flush=True,
    )
    for mode in ("embedding", "keywords", "blend"):
        latencies = []
        for number, question in enumerate(questions):
            request = SearchRequest(question, ("bench",), mode=mode, limit=10)
            t0 = time.perf_counter()
            await kb.search(request)
            if number >= 10:
                latencies.append((time.perf_counter() - t0) * 1000)
        p50, p95 = statistics.median(latencies), percentile(latencies, 0.95)
        result[f"{mode}_p50_ms"], result[f"{mode}_p95_ms"] = p50, p95
        print(f"  search {mode:<9}: p50 {p50:6.1f} ms  p95 {p95:6.1f} ms  (n={len(latencies)})", flush=True)
    return result


# ---------- recall on CMRC 2018 dev ----------


async def bench_recall(workdir: Path, depth: int = 30) -> dict[str, float]:
    print("\n== recall@5 on CMRC 2018 dev (offline embedder)", flush=True)
    from adapters.local_embedder import LocalEmbedder

    home = workdir / "recall"
    kb = ChromaKnowledgeBase(
        chromadb.PersistentClient(path=str(home / "chroma")),
        embedders=lambda m: LocalEmbedder(),
        keyword_home=home / "kw",
    )
    questions: list[tuple[str, str]] = []
    t0 = time.perf_counter()
    for article in load_squad(DEV):
        for number, paragraph in enumerate(article["paragraphs"]):
            doc_id = f"{article['id']}-{number}"
            info = DocumentInfo("cmrc", doc_id, str(article["title"]), doc_id, doc_id, True, 0)
            chunk = Chunk(paragraph["context"], (), 0, len(paragraph["context"]))
            await kb.replace_document("cmrc", replace(info), [chunk], embedding_model=MODEL)
            questions.extend((q["question"], doc_id) for q in paragraph["qas"])
    await kb.flush()
    print(f"  ingested {len(questions)} questions' passages in {time.perf_counter() - t0:.0f} s", flush=True)
    lists: dict[str, list[list[Hit]]] = {"embedding": [], "keywords": [], "blend": []}
    for question, _ in questions:
        for mode in lists:
            limit = 5 if mode == "blend" else depth
            request = SearchRequest(question, ("cmrc",), mode=mode, limit=limit)  # type: ignore[arg-type]
            lists[mode].append(await kb.search(request))

    def recall(results: list[list[Hit]]) -> float:
        found = sum(
            gold in {h.document_id for h in hits[:5]}
            for hits, (_, gold) in zip(results, questions, strict=True)
        )
        return found / len(questions)

    result = {f"recall5_{mode}": recall(hits) for mode, hits in lists.items()}
    fusions: dict[str, Callable[[list[Hit], list[Hit]], list[Hit]]] = {
        "rrf k=60": lambda v, k: rrf_fuse([v, k]),
        "rrf k=60 w=0.6/0.4": lambda v, k: rrf_fuse([v, k], weights=[0.6, 0.4]),
        "rrf k=60 w=0.4/0.6": lambda v, k: rrf_fuse([v, k], weights=[0.4, 0.6]),
        "rrf k=20": lambda v, k: rrf_fuse([v, k], k=20),
        "relative_score w=0.3": lambda v, k: relative_score_fuse(v, k, vector_weight=0.3),
        "relative_score w=0.5": lambda v, k: relative_score_fuse(v, k, vector_weight=0.5),
        "relative_score w=0.7": lambda v, k: relative_score_fuse(v, k, vector_weight=0.7),
    }
    for name, fusion in fusions.items():
        fused = [fusion(v, k) for v, k in zip(lists["embedding"], lists["keywords"], strict=True)]
        result[f"recall5_fusion {name}"] = recall(fused)
    for key, value in result.items():
        print(f"  {key:<36} {value:.3f}", flush=True)
    return result


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--skip-scale", action="store_true")
    parser.add_argument("--skip-recall", action="store_true")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="kb-bench-"))
    results: dict[str, dict[str, float]] = {}
    try:
        if not args.skip_recall:
            results["recall"] = await bench_recall(workdir)
        if not args.skip_scale:
            for size in args.sizes:
                results[str(size)] = await bench_scale(size, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print("\n" + json.dumps(results, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    asyncio.run(main())
