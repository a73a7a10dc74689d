"""Benchmark: single-shot search vs the multi-hop loop on HotpotQA dev-500 (IRCoT subsample), pooled paragraphs.

Run: /tmp/venv/bin/python tests/benchmarks/bench_multihop.py [--mode keywords|blend|embedding] [--limit N]
     [--split N]  (the table for all questions, then for the first N and the rest: a tuning/held-out split)

All paragraphs of all 500 questions are pooled (deduplicated by title + text) into one dataset of the real
knowledge base (ChromaKnowledgeBase: Chroma + the bm25s keyword index, the offline USE embedder), built
once under --store (reused on later runs; the first build takes about 9 minutes). Each paragraph is one
document: title = document name, text = the paragraph (the index sees "title > text").

Both methods search with the same policy: --depth 10 (default) returns 10 hits per search with no score
floor, the README's one-step baseline; --depth 0 uses the production query-length tiers (8 hits for long
questions, threshold 0.28). Single-shot = one search with the question, its top 10. The loop =
IterativeRetriever forced multi with production limits (3 rounds, 8 new candidates per follow-up round,
the local reranker once at the end), its top 10. Printed: recall@10 (share of gold paragraphs found),
all-gold@10 (both gold paragraphs in the top 10), mean retrieval rounds, mean model calls per question,
plus diagnostics: both gold paragraphs anywhere in the loop's evidence, and questions judged sufficient
in round 1 while a gold paragraph was missing. With OPENAI_BASE_URL set the loop's engine is the model
(core.answering.llm_engine.LlmEngine over adapters.models.openai_chat, KB_AUX_MODEL or KB_CHAT_MODEL); otherwise the
extractive engine.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.knowledge.search import SearchTiers  # noqa: E402
from core.models import Chunk, DocumentInfo, SearchMode  # noqa: E402
from core.ports import Engine, KnowledgeBase  # noqa: E402
from core.retrieval.evidence import LoopLimits  # noqa: E402
from core.retrieval.iterative import IterativeRetriever  # noqa: E402
from core.retrieval.rerank import LocalReranker  # noqa: E402
from core.retrieval.single_search import SearchPolicy  # noqa: E402

DATA = Path("/work/shared/data/multihop_en/hotpotqa_dev500_ircot.jsonl")
DATASET = "hotpotqa"
TOP_K = 10


@dataclass(frozen=True, slots=True)
class Paragraph:
    """One pooled paragraph."""

    doc_id: str
    title: str
    text: str


@dataclass
class Question:
    """A question and the document ids of its gold paragraphs."""

    text: str
    gold: set[str] = field(default_factory=set)


def paragraph_id(title: str, text: str) -> str:
    """A stable id for a paragraph (same title and text -> same id)."""
    return hashlib.sha1(f"{title}\n{text}".encode()).hexdigest()[:16]


def load(path: Path) -> tuple[dict[str, Paragraph], list[Question]]:
    """Pooled unique paragraphs and the questions with their gold paragraph ids."""
    pool: dict[str, Paragraph] = {}
    questions: list[Question] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        question = Question(row["question_text"])
        for context in row["contexts"]:
            doc_id = paragraph_id(context["title"], context["paragraph_text"])
            pool.setdefault(doc_id, Paragraph(doc_id, context["title"], context["paragraph_text"]))
            if context.get("is_supporting"):
                question.gold.add(doc_id)
        questions.append(question)
    return pool, questions


async def open_kb(store: Path, pool: dict[str, Paragraph]) -> Any:
    """The real knowledge base over store/, ingesting the pool the first time."""
    import chromadb

    from adapters.embedders.local import LOCAL_MODEL_NAME, LocalEmbedder
    from adapters.knowledge.chroma.kb import ChromaKnowledgeBase

    embedder = LocalEmbedder()
    await asyncio.to_thread(store.mkdir, parents=True, exist_ok=True)
    kb = ChromaKnowledgeBase(
        chromadb.PersistentClient(path=str(store / "chroma")),
        embedders=lambda _model: embedder,
        keyword_home=store / "keywords",
    )
    marker = store / f"ingested-{len(pool)}"
    if not marker.exists():
        started = time.perf_counter()
        for index, paragraph in enumerate(pool.values(), start=1):
            info = DocumentInfo(
                dataset=DATASET,
                document_id=paragraph.doc_id,
                name=paragraph.title,
                source="hotpotqa",
                content_hash=paragraph.doc_id,
                enabled=True,
                chunk_count=1,
            )
            chunk = Chunk(text=paragraph.text, heading_path=(), position=0, tokens=0)
            await kb.replace_document(DATASET, info, [chunk], embedding_model=LOCAL_MODEL_NAME)
            if index % 500 == 0:
                print(f"  ingested {index}/{len(pool)} ({time.perf_counter() - started:.0f} s)", flush=True)
        await kb.flush()
        marker.write_text("ok", encoding="utf-8")
    return kb


def make_engine() -> tuple[Engine, str]:
    """The model engine when OPENAI_BASE_URL is set, else the extractive engine."""
    if os.environ.get("OPENAI_BASE_URL"):
        from adapters.models.openai_chat import OpenAIChatModel
        from core.answering.llm_engine import LlmEngine

        model = (
            os.environ.get("KB_AUX_MODEL")
            or os.environ.get("KB_CHAT_MODEL")
            or os.environ.get("KB_MODEL", "")
        )
        chat = OpenAIChatModel(
            base_url=os.environ["OPENAI_BASE_URL"], api_key=os.environ.get("OPENAI_API_KEY"), model=model
        )
        return LlmEngine(chat=chat, aux=chat), f"model:{model}"
    from adapters.extractive import ExtractiveEngine

    return ExtractiveEngine(), "extractive"


async def _ignore(_event: object) -> None:
    return None


def found(hit_doc_ids: list[str], gold: set[str]) -> tuple[float, bool]:
    """(recall, all gold found) of the top-10 document ids."""
    top = set(hit_doc_ids[:TOP_K])
    hits = len(gold & top)
    return hits / len(gold), hits == len(gold)


async def run(args: argparse.Namespace) -> None:
    pool, questions = load(DATA)
    questions = questions[: args.limit] if args.limit else questions
    print(f"{len(questions)} questions, {len(pool)} pooled paragraphs, search mode {args.mode}")
    kb: KnowledgeBase = await open_kb(Path(args.store), pool)
    engine, engine_name = make_engine()
    if args.depth:
        depth = args.depth
        tiers = SearchTiers(
            topk_short=depth, topk_medium=depth, topk_long=depth, min_score_short=0.0, min_score_default=0.0
        )
        policy = SearchPolicy(tiers)
    else:
        policy = SearchPolicy()
    retriever = IterativeRetriever(
        kb=kb,
        engine=engine,
        reranker=LocalReranker(),
        policy=policy,
        limits=LoopLimits(max_rounds=args.rounds),
    )
    mode: SearchMode = args.mode
    single_recall, single_all, loop_recall, loop_all = [], [], [], []
    rounds, calls, seconds = [], [], []
    stops: dict[str, int] = {}
    in_evidence, lenient = [], 0
    failures: list[dict[str, Any]] = []
    for index, question in enumerate(questions, start=1):
        single = [hit.document_id for hit in await kb.search(policy.request(question.text, [DATASET], mode))]
        recall, all_gold = found(single, question.gold)
        single_recall.append(recall)
        single_all.append(all_gold)
        started = time.perf_counter()
        outcome = await retriever.retrieve(
            question.text, datasets=[DATASET], search_mode=mode, retrieval_mode="multi", emit=_ignore
        )
        seconds.append(time.perf_counter() - started)
        looped = [hit.document_id for hit in outcome.hits]
        recall, all_gold = found(looped, question.gold)
        loop_recall.append(recall)
        loop_all.append(all_gold)
        rounds.append(len(outcome.trace.rounds))
        in_evidence.append(question.gold <= set(looped))
        first_sufficient = bool(outcome.trace.rounds) and outcome.trace.rounds[0].sufficient
        if first_sufficient and not question.gold <= {h.document_id for h in outcome.hits}:
            lenient += 1
        calls.append(outcome.model_calls)
        stops[outcome.stop_reason.value] = stops.get(outcome.stop_reason.value, 0) + 1
        if not all_gold and args.dump:
            accumulated = {h.document_id for h in outcome.hits}
            failures.append(
                {
                    "question": question.text,
                    "gold_titles": [pool[g].title for g in question.gold],
                    "gold_in_evidence": [pool[g].title for g in question.gold if g in accumulated],
                    "single_found": [pool[g].title for g in question.gold if g in set(single[:TOP_K])],
                    "rounds": outcome.trace.to_json()["rounds"],
                    "stop": outcome.stop_reason.value,
                    "top10": [h.document_name for h in outcome.hits[:TOP_K]],
                }
            )
        if index % 100 == 0:
            print(f"  {index} questions", flush=True)
    close = getattr(kb, "close", None)
    if close is not None:
        await close()
    if args.dump:
        dump = json.dumps(failures, ensure_ascii=False, indent=1)
        await asyncio.to_thread(Path(args.dump).write_text, dump, encoding="utf-8")

    def mean(values: list[Any]) -> float:
        return statistics.fmean(float(v) for v in values) if values else 0.0

    print()
    depth_text = f"depth {args.depth}, no score floor" if args.depth else "production tiers"
    print(f"engine: {engine_name}; loop max rounds {args.rounds}; search mode {mode}; {depth_text}")
    slices = [("all", 0, len(questions))]
    if 0 < args.split < len(questions):
        slices += [
            (f"first {args.split}", 0, args.split),
            (f"last {len(questions) - args.split}", args.split, len(questions)),
        ]
    print(
        f"{'questions':<12}{'method':<20}{'recall@10':>11}{'all-gold@10':>13}{'rounds':>8}{'model calls':>13}"
    )
    for label, start, end in slices:
        cut = slice(start, end)
        print(
            f"{label:<12}{'single-shot search':<20}{mean(single_recall[cut]):>11.3f}"
            f"{mean(single_all[cut]):>13.3f}{1.0:>8.2f}{0.0:>13.2f}"
        )
        print(
            f"{'':<12}{'multi-hop loop':<20}{mean(loop_recall[cut]):>11.3f}{mean(loop_all[cut]):>13.3f}"
            f"{mean(rounds[cut]):>8.2f}{mean(calls[cut]):>13.2f}"
        )
        print(
            f"{'':<12}all-gold@10 difference: "
            f"{100 * (mean(loop_all[cut]) - mean(single_all[cut])):+.1f} points ({end - start} questions)"
        )
    print(f"both gold paragraphs anywhere in the loop's evidence: {mean(in_evidence):.3f}")
    print(f"judged sufficient in round 1 with a gold paragraph missing: {lenient}/{len(questions)}")
    print(
        f"rounds distribution: {dict(sorted((r, rounds.count(r)) for r in set(rounds)))}; max {max(rounds)}"
    )
    print(f"stop reasons: {dict(sorted(stops.items()))}")
    ordered = sorted(seconds)
    p50, p95 = ordered[len(ordered) // 2], ordered[int(len(ordered) * 0.95) - 1]
    print(f"loop latency per question: p50 {p50 * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--mode", choices=("keywords", "blend", "embedding"), default="keywords")
    parser.add_argument("--limit", type=int, default=0, help="only the first N questions")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--depth", type=int, default=TOP_K, help="hits per search (0: production tiers)")
    parser.add_argument("--store", default="/tmp/kb_bench_multihop", help="where the pooled dataset is built")
    parser.add_argument("--dump", default="", help="write the loop's all-gold misses to this JSON file")
    parser.add_argument(
        "--split", type=int, default=0, help="also report the first N and the remaining questions separately"
    )
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
