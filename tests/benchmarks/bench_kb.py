"""Knowledge-base benchmark: ingest throughput, search latency (10k / 100k chunks), CMRC 2018 recall@5,
and reading speed per document format (PDF, Word, PowerPoint, Excel; tests/benchmarks/mixed_formats.py).

Run: python tests/benchmarks/bench_kb.py [--sizes 10000 100000] [--skip-scale] [--skip-recall] [--skip-floor]
     [--skip-formats]

* Ingest throughput excludes embedding and nothing else: the corpus is written as Markdown files
  first; the clock then covers what `kb ingest FOLDER` does in its process (bot/cli/knowledge/ingest.py)
  after start-up: scanning the folder, opening the knowledge base, reading, hashing and chunking every file,
  keyword tokenising, the Chroma writes, catalog flips and the final BM25 build + save (kb.flush()),
  with the worker processes started inside the clock. Only interpreter start-up and imports are left
  out. Vectors are computed before the clock starts (once, by chunking the files exactly as ingestion
  does) and served by a lookup "embedder"; the time spent inside it is measured and subtracted
  (milliseconds). Also printed: CPU seconds of the main process and of the worker processes, and how
  much of the machine they used, since on 2 cores the bound is total CPU.
* The floor: embedded Chroma alone upserting the very records the ingest wrote (read back: ids,
  vectors, metadata with the chunk text) in the same batches, with none of ingestion's other work. The
  ingest figure is also printed as a share of it, which compares across machines: on a 2-core machine
  where Chroma alone writes 724-895 chunks/s at 100k, no ingestion into embedded Chroma reaches 1000/s.
* Search latency excludes query embedding (query vectors are precomputed the same way): p50 / p95 over
  200 queries after 10 warm-ups, embedded Chroma.
* Recall@5 on CMRC 2018 dev with the offline embedder: each passage is one document (its title is the
  document title), a question's gold is its passage. Also compares blend fusions on the same candidates.

The synthetic scale corpus is made of CMRC sentences (dev + trial) recombined into 150-300 character
paragraphs, SECTIONS_PER_DOC x PARAGRAPHS_PER_SECTION per file (about 53 chunks per file after packing);
a chunk's vector is the normalised sum of its sentences' USE vectors, so the vector distribution is that
of real Chinese text. Data is read in place from /work/shared/data (or KB_BENCH_DATA).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import resource
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
READ_BATCH = 5120  # records read back at a time for the Chroma-alone floor (ten write batches)
sys.path.insert(0, str(ROOT))

from adapters.embedders.local import encode  # noqa: E402
from adapters.knowledge.chroma.catalog import collection_name  # noqa: E402
from adapters.knowledge.chroma.dataset import HNSW_CONFIGURATION, WRITE_BATCH  # noqa: E402
from adapters.knowledge.chroma.kb import ChromaKnowledgeBase  # noqa: E402
from adapters.knowledge.document_readers import UnreadableDocument, iter_document_paths, read_document  # noqa: E402
from core.budget import count_tokens  # noqa: E402
from core.knowledge.chunking import chunk_markdown, embedding_text  # noqa: E402
from core.knowledge.ingest import ingest  # noqa: E402
from core.knowledge.ingest_plan import IngestSummary  # noqa: E402
from core.knowledge.search import relative_score_fuse, rrf_fuse  # noqa: E402
from core.models import Chunk, DocumentInfo, Hit, SearchRequest  # noqa: E402
from core.ports import Embedder  # noqa: E402
from tests.benchmarks.mixed_formats import bench_formats  # noqa: E402

DATA = Path(os.environ.get("KB_BENCH_DATA", "/work/shared/data")) / "zh_cmrc2018"
DEV = DATA / "cmrc2018_dev_squad_style.json"
TRIAL = DATA / "cmrc2018_trial_squad_style.json"
SECTIONS_PER_DOC = 5
PARAGRAPHS_PER_SECTION = 12
MAX_PARAGRAPH_TOKENS = 360
MODEL = "use-multilingual-v3"


class LookupEmbedder:
    """Serves precomputed vectors by text, so timings exclude embedding."""

    def __init__(self, table: dict[str, np.ndarray], dimension: int = 512) -> None:
        self._table = table
        self._dimension = dimension
        self.seconds = 0.0

    def add(self, table: dict[str, np.ndarray]) -> None:
        """Serve these vectors too (chunks written after the first table)."""
        self._table.update(table)

    @property
    def name(self) -> str:
        return MODEL

    @property
    def dimension(self) -> int:
        return self._dimension

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        # float32 rows instead of lists: the store converts with np.asarray, and .tolist() would be
        # embedding-side work that this benchmark must not time. Time spent here is subtracted.
        started = time.perf_counter()
        vectors = [self._table[text] for text in texts]
        self.seconds += time.perf_counter() - started
        return cast(list[list[float]], vectors)

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


def cmrc_texts() -> tuple[list[str], list[str]]:
    """CMRC sentences (dev + trial, sorted, unique) and every question."""
    sentences: list[str] = []
    questions: list[str] = []
    for path in (DEV, TRIAL):
        for article in load_squad(path):
            for paragraph in article["paragraphs"]:
                parts = re.split(r"(?<=[。！？])", paragraph["context"])
                sentences.extend(p.strip() for p in parts if len(p.strip()) >= 8)
                questions.extend(q["question"] for q in paragraph["qas"])
    return sorted(set(sentences)), questions


def cmrc_sentences(seed: int = 7) -> tuple[list[str], np.ndarray, list[str], np.ndarray]:
    """CMRC sentences (dev + trial) and their USE vectors, plus 210 question texts and vectors."""
    sentences, questions = cmrc_texts()
    questions = random.Random(seed).sample(questions, 210)
    return sentences, cached_encode(sentences), questions, cached_encode(questions)


def write_corpus(folder: Path, size: int, seed: int = 7) -> dict[str, np.ndarray]:
    """Markdown files holding at least `size` chunks; returns each chunk's embedding text -> vector.

    A file is a titled document of SECTIONS_PER_DOC sections with paragraphs of CMRC sentences
    (150-300 characters, each tagged with its number). A paragraph's vector is the normalised sum of
    its sentences' USE vectors, a chunk's the normalised sum of its paragraphs': the distribution of
    real Chinese text. The files are chunked here once, untimed, exactly as ingestion will, to build
    the lookup table the benchmark "embedder" serves from.
    """
    sentences, sentence_vectors, _, _ = cmrc_sentences(seed)
    rng = random.Random(seed)
    folder.mkdir(parents=True)
    table: dict[str, np.ndarray] = {}
    count = 0
    paragraph_number = 0
    files = 0
    while count < size:
        files += 1
        paragraphs: dict[str, np.ndarray] = {}
        lines = [f"# 基准文档{files}", ""]
        for section in range(SECTIONS_PER_DOC):
            lines += [f"## 第{section + 1}节 主题{rng.randrange(1000)}", ""]
            for _ in range(PARAGRAPHS_PER_SECTION):
                picked: list[int] = []
                length = 0
                while length < 150:
                    picked.append(rng.randrange(len(sentences)))
                    length += len(sentences[picked[-1]])
                joined = re.sub("[\u200b\u2060\ufeff]", "", "".join(sentences[j] for j in picked))
                text = f"[{paragraph_number}] " + " ".join(joined[:300].split())
                while count_tokens(text) > MAX_PARAGRAPH_TOKENS:  # a paragraph must stay one chunk
                    text = text[:-10].rstrip()
                paragraph_number += 1
                paragraphs[text] = sentence_vectors[picked].sum(axis=0)
                lines += [text, ""]
        path = folder / f"doc{files:06d}.md"
        path.write_text("\n".join(lines), encoding="utf-8")
        document = read_document(path)
        title = document.title or document.name
        for chunk in chunk_markdown(document.markdown):
            total = np.sum([paragraphs[part] for part in chunk.text.split("\n\n")], axis=0)
            table[embedding_text(chunk, document_title=title)] = total / (np.linalg.norm(total) or 1.0)
            count += 1
    return table


async def kb_ingest(
    home: Path, folder: Path, embedder: Embedder, paths: Sequence[Path] | None = None
) -> tuple[IngestSummary, Any]:
    """What `kb ingest FOLDER --dataset bench` does (bot/cli/knowledge/ingest.py: scan, open, ingest, flush),
    with this embedder (of paths when given, else every file of folder); the knowledge base is returned open
    (close() stops its worker processes)."""
    paths = list(iter_document_paths([folder])) if paths is None else list(paths)
    kb = ChromaKnowledgeBase(
        chromadb.PersistentClient(path=str(home / "chroma")),
        embedders=lambda m: embedder,
        keyword_home=home / "keywords",
    )
    model = await kb.dataset_model("bench") or embedder.name
    summary = await ingest(
        kb,
        "bench",
        paths,
        read=read_document,
        embedding_model=model,
        roots=[folder],
        unreadable=(UnreadableDocument, OSError, UnicodeError),
        on_event=lambda event: None,
    )
    await kb.flush()
    return summary, kb


def chroma_alone(home: Path, floor_home: Path) -> tuple[float, float, int]:
    """Embedded Chroma writing the records this ingest wrote, and nothing else: (wall s, CPU s, count).

    The ids, vectors and metadata (chunk text included) are read back from the ingested dataset, READ_BATCH
    records at a time by id, and each batch is upserted into a fresh collection with the same configuration,
    in the same batches (WRITE_BATCH), with no reading, chunking, tokenising, catalog or BM25 work; only the
    upserts are timed. It is the most any ingestion writing these records into embedded Chroma could reach
    on this machine, so the ratio to it is a figure that holds across machines. (Reading everything first
    with get(limit, offset) held a million records in memory, 17 GB, and each page cost more than the last.)
    """
    source = chromadb.PersistentClient(path=str(home / "chroma")).get_collection(
        collection_name("bench"), embedding_function=None
    )
    ids = source.get(include=[])["ids"]
    target = chromadb.PersistentClient(path=str(floor_home)).create_collection(
        "floor", embedding_function=None, configuration=cast(Any, HNSW_CONFIGURATION)
    )
    wall = cpu = 0.0
    for offset in range(0, len(ids), READ_BATCH):
        got = source.get(ids=ids[offset : offset + READ_BATCH], include=["embeddings", "metadatas"])
        matrix = np.asarray(got["embeddings"], dtype=np.float32)
        metadatas = got["metadatas"] or []
        for start in range(0, len(got["ids"]), WRITE_BATCH):
            end = start + WRITE_BATCH
            started, cpu_started = time.perf_counter(), time.process_time()
            target.upsert(
                ids=got["ids"][start:end], embeddings=matrix[start:end], metadatas=metadatas[start:end]
            )
            wall += time.perf_counter() - started
            cpu += time.process_time() - cpu_started
    return wall, cpu, len(ids)


def children_cpu() -> float:
    """CPU seconds of this process's finished child processes (the ingest workers, once closed)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def bench_scale(size: int, workdir: Path, *, floor: bool = True) -> dict[str, float]:
    print(f"\n== {size:,} chunks (embedded Chroma)", flush=True)
    folder = workdir / f"docs-{size}"
    table = write_corpus(folder, size)
    _, _, questions, question_vectors = cmrc_sentences()
    for question, vector in zip(questions, question_vectors, strict=True):
        table[question] = vector
    embedder = LookupEmbedder(table)
    home = workdir / f"scale-{size}"
    load_before = os.getloadavg()[0]
    children_before = children_cpu()
    started = time.perf_counter()
    cpu_started = time.process_time()
    summary, kb = await kb_ingest(home, folder, embedder)
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    chunks = summary.chunks_added
    net = elapsed - embedder.seconds
    result = {
        "chunks": chunks,
        "files": summary.files,
        "load_average_1min_before": load_before,
        "ingest_chunks_per_s": chunks / net,
        "ingest_wall_s": elapsed,
        "embedder_s": embedder.seconds,
        "main_process_cpu_s": cpu,
    }
    print(
        f"  ingest: {chunks / net:,.0f} chunks/s excluding embedding ({chunks:,} chunks in {summary.files:,} "
        f"files, {elapsed:.1f} s wall of which {embedder.seconds:.2f} s in the embedder; load average "
        f"{load_before:.1f} before, {os.cpu_count()} cores)",
        flush=True,
    )
    started = time.perf_counter()
    again, other = await kb_ingest(home, folder, embedder)
    result["reingest_unchanged_s"] = time.perf_counter() - started
    await other.close()
    assert again.chunks_added == 0 and again.chunks_unchanged == chunks, again
    print(f"  re-ingest, nothing changed: {result['reingest_unchanged_s']:.1f} s", flush=True)
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
    await kb.close()
    workers = children_cpu() - children_before  # the re-ingest and the searches start no worker
    result["worker_processes_cpu_s"] = workers
    result["cpu_utilisation"] = (cpu + workers) / (elapsed * (os.cpu_count() or 1))
    print(
        f"  ingest CPU: main process {cpu:.1f} s (Chroma's threads included), worker processes "
        f"{workers:.1f} s; {result['cpu_utilisation']:.0%} of {os.cpu_count()} cores over the ingest",
        flush=True,
    )
    if floor:
        wall, floor_cpu, written = await asyncio.to_thread(chroma_alone, home, workdir / f"floor-{size}")
        result["chroma_alone_chunks_per_s"] = written / wall
        result["ingest_share_of_chroma_alone"] = (chunks / net) / (written / wall)
        print(
            f"  embedded Chroma alone, upserting the same {written:,} records in batches of {WRITE_BATCH}: "
            f"{written / wall:,.0f} chunks/s ({wall:.1f} s, {floor_cpu:.1f} CPU s); this ingest runs at "
            f"{result['ingest_share_of_chroma_alone']:.0%} of it",
            flush=True,
        )
    return result


# ---------- recall on CMRC 2018 dev ----------


async def bench_recall(workdir: Path, depth: int = 30) -> dict[str, float]:
    print("\n== recall@5 on CMRC 2018 dev (offline embedder)", flush=True)
    from adapters.embedders.local import LocalEmbedder

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
    parser.add_argument(
        "--skip-floor", action="store_true", help="do not time embedded Chroma alone on the same records"
    )
    parser.add_argument(
        "--skip-formats", action="store_true", help="skip the mixed-format (PDF/Office) corpus"
    )
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="kb-bench-"))
    results: dict[str, dict[str, float]] = {}
    try:
        if not args.skip_recall:
            results["recall"] = await bench_recall(workdir)
        if not args.skip_formats:
            results["formats"] = await bench_formats(workdir, cmrc_texts()[0], kb_ingest, MODEL)
        if not args.skip_scale:
            for size in args.sizes:
                results[str(size)] = await bench_scale(size, workdir, floor=not args.skip_floor)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    print("\n" + json.dumps(results, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    asyncio.run(main())
