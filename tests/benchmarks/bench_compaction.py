"""Benchmark: history tokens per turn over a 100-turn Chinese conversation, full vs last-5 vs compaction.

Run: /tmp/venv/bin/python tests/benchmarks/bench_compaction.py [--turns 100] [--budget 6000] [--brief] [--plot a.png]

A fact is planted in turn 1 (project code name 「青鸾」 and budget 3,870 万元). Every turn stores the question
first, loads the history the model would receive through CompactingContextLoader (in-memory store,
deterministic summariser: the extractive engine when available, else a local lossy one), then stores the
answer. Printed per turn: tokens of the full history, of the last 5 turns, and of the compacted history
(which must never exceed the budget), the cumulative summary calls, and at the end whether the turn-1 fact
is still in what the model receives. The plot needs matplotlib (optional, not a project dependency).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from core.conversation.compaction import CompactingContextLoader  # noqa: E402
from core.conversation.compaction_batches import turns_tokens  # noqa: E402
from core.conversation.compaction_messages import messages_tokens  # noqa: E402
from core.models import Turn, Usage  # noqa: E402
from core.ports import Engine  # noqa: E402
from core.record import NO_DETAILS  # noqa: E402
from tests.fakes import FakeEngine, InMemoryConversationStore  # noqa: E402
from tests.stored import stored_question  # noqa: E402

CONVERSATION = "bench:T:C:1"
FACT_NAME, FACT_NUMBER = "青鸾", "3,870"
FIRST_QUESTION = (
    "我们部门在推进代号为「青鸾」的政务服务一体化项目,总预算 3,870 万元,计划 2026年3月5日 前完成立项。"
    "请问立项审批需要准备哪些材料,流程大概要多久?"
)
TOPICS = ("行政复议", "政府采购", "预算执行", "审批服务", "档案管理", "数据共享", "信息公开", "绩效评价")
ANSWER_SENTENCES = (
    "根据《{topic}管理办法》第{n}条,申请材料应当在受理后{d}个工作日内完成形式审查。",
    "对于金额超过 {m} 万元的事项,需要报分管领导审批并在系统中留痕。",
    "材料不全的,经办人应当一次性告知需要补正的全部内容,补正期间不计入办理时限。",
    "{topic}的年度计划应当于每年{month}月底前报送,逾期未报的按上一年度计划执行。",
    "实践中常见的问题是附件格式不统一,建议统一使用 PDF 并加盖电子印章。",
    "如对处理结果有异议,可以在收到通知之日起{d2}日内申请复核,复核以书面形式答复。",
    "各业务科室应当指定一名联络人,负责材料流转和进度跟踪,每周汇总一次办理情况。",
    "涉及跨部门协同的,由牵头部门召集会商,会商纪要作为办理依据存档。",
)
QUESTION_TEMPLATES = (
    "关于{topic},如果材料里缺少盖章页,应该怎么补救?",
    "{topic}的办理时限是怎么计算的?节假日算不算在内?",
    "请再说明一下{topic}中金额较大的事项需要谁来审批。",
    "{topic}过程中如果对结果有异议,复核要在多少天内提出?",
    "能不能把{topic}的年度计划报送要求再讲清楚一点?",
)


def conversation(turns: int, *, seed: int = 7) -> list[tuple[str, str]]:
    """Deterministic question/answer pairs of realistic length (answers of 6 to 14 sentences)."""
    rng = random.Random(seed)
    pairs = []
    for index in range(turns):
        topic = rng.choice(TOPICS)
        question = FIRST_QUESTION if index == 0 else rng.choice(QUESTION_TEMPLATES).format(topic=topic)
        sentences = [
            rng.choice(ANSWER_SENTENCES).format(
                topic=topic,
                n=rng.randint(3, 40),
                d=rng.choice((3, 5, 7, 10, 15)),
                m=rng.choice((50, 100, 200, 500)),
                month=rng.randint(1, 12),
                d2=rng.choice((15, 30, 60)),
            )
            for _ in range(rng.randint(6, 14))
        ]
        pairs.append((question, "".join(sentences)))
    return pairs


class LossySummariser(FakeEngine):
    """A deterministic stand-in for a summary model that keeps questions' gist and drops every digit."""

    async def summarise(self, previous: str, turns: Sequence[Turn], *, max_tokens: int) -> tuple[str, Usage]:
        self.history.append(("summarise", (previous, list(turns), max_tokens)))
        gist = "".join(f"用户问:{''.join(c for c in t.question if not c.isdigit())[:40]}。" for t in turns)
        text = (previous.splitlines()[0] if previous else "") + gist
        return text[-1200:], Usage(0, 0)


class RecordingEngine:
    """Wraps an engine to count summary calls and keep the last raw summary (before the key-facts check)."""

    def __init__(self, inner: Engine) -> None:
        self.inner = inner
        self.calls = 0
        self.last_raw = ""

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    async def summarise(self, previous: str, turns: Sequence[Turn], *, max_tokens: int) -> tuple[str, Usage]:
        self.calls += 1
        text, usage = await self.inner.summarise(previous, turns, max_tokens=max_tokens)
        self.last_raw = text
        return text, usage


def summariser(name: str) -> Engine:
    if name == "extractive":
        from adapters.extractive import ExtractiveEngine

        return ExtractiveEngine()
    return LossySummariser()


def has_fact(text: str) -> bool:
    return FACT_NAME in text and (FACT_NUMBER in text or FACT_NUMBER.replace(",", "") in text)


async def run(turns: int, budget: int, engine_name: str) -> dict[str, object]:
    store = InMemoryConversationStore()
    engine = RecordingEngine(summariser(engine_name))
    loader = CompactingContextLoader(store=store, engine=engine, recent_tokens=budget)  # type: ignore[arg-type]
    history: list[Turn] = []
    rows: list[tuple[int, int, int, int, int]] = []
    final = {"full": False, "last5": False, "compaction": False, "raw_summary": False}
    for number, (question, answer) in enumerate(conversation(turns), start=1):
        record = await stored_question(store, CONVERSATION, question)
        context = await loader.load(CONVERSATION, before_id=record.id, on_compacting=_nothing)
        compacted = messages_tokens(context.messages)
        rows.append((number, turns_tokens(history), turns_tokens(history[-5:]), compacted, engine.calls))
        if number == turns:
            final["full"] = any(has_fact(t.question) for t in history)
            final["last5"] = any(has_fact(t.question + t.answer) for t in history[-5:])
            final["compaction"] = has_fact("\n".join(m.content for m in context.messages))
            final["raw_summary"] = has_fact(engine.last_raw)
        await store.complete_record(record.id, answer=answer, rewritten=None, details=NO_DETAILS)
        history.append(Turn(record.id, question, answer))
    return {"rows": rows, "final": final, "budget": budget, "engine": engine_name}


async def _nothing() -> None:
    return None


def report(result: dict[str, object], *, every_turn: bool) -> None:
    rows: list[tuple[int, int, int, int, int]] = result["rows"]  # type: ignore[assignment]
    budget = int(result["budget"])  # type: ignore[call-overload]
    print(f"\n== summariser: {result['engine']} · budget {budget} tokens ==")
    print(f"{'turn':>5} {'full':>8} {'last-5':>8} {'compacted':>10} {'summary calls':>14}")
    picks = {1, 10, 25, 50, 75, len(rows)}
    for row in rows:
        if every_turn or row[0] in picks:
            print(f"{row[0]:>5} {row[1]:>8} {row[2]:>8} {row[3]:>10} {row[4]:>14}")
    peak = max(row[3] for row in rows)
    last = rows[-1]
    print(f"compacted peak {peak} tokens = {peak / budget:.0%} of the budget (never over: {peak <= budget})")
    print(
        f"turn {last[0]}: compacted/full = {last[3] / max(1, last[1]):.1%}, compacted/last-5 = {last[3] / max(1, last[2]):.0%}"
    )
    final: dict[str, bool] = result["final"]  # type: ignore[assignment]
    print(
        "turn-1 fact present at the last turn: "
        f"full={'yes' if final['full'] else 'no'} · last-5={'yes' if final['last5'] else 'no'} · "
        f"compaction={'yes' if final['compaction'] else 'no'} "
        f"(in the summariser's raw output: {'yes' if final['raw_summary'] else 'no'})"
    )


def plot(results: list[dict[str, object]], path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed; skipping the plot")
        return
    figure, axes = plt.subplots(figsize=(9, 5))
    base: list[tuple[int, int, int, int, int]] = results[0]["rows"]  # type: ignore[assignment]
    axes.plot([r[0] for r in base], [r[1] for r in base], label="full history")
    axes.plot([r[0] for r in base], [r[2] for r in base], label="last 5 turns")
    for result in results:
        rows: list[tuple[int, int, int, int, int]] = result["rows"]  # type: ignore[assignment]
        axes.plot([r[0] for r in rows], [r[3] for r in rows], label=f"compaction ({result['engine']})")
    axes.axhline(int(results[0]["budget"]), linestyle="--", color="grey", label="budget")  # type: ignore[call-overload]
    axes.set_xlabel("turn")
    axes.set_ylabel("history tokens sent")
    axes.set_yscale("log")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    print(f"plot written to {path}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--budget", type=int, default=6000)
    parser.add_argument("--brief", action="store_true", help="print turns 1/10/25/50/75/last only")
    parser.add_argument("--plot", type=Path, help="write a PNG of the three curves (needs matplotlib)")
    args = parser.parse_args()
    names = ["lossy"]
    try:
        import adapters.extractive  # noqa: F401

        names.insert(0, "extractive")
    except ImportError:
        print("adapters.extractive is not available; using the local lossy summariser only")
    results = [asyncio.run(run(args.turns, args.budget, name)) for name in names]
    for result in results:
        report(result, every_turn=not args.brief)
    if args.plot:
        plot(results, args.plot)
    ok = all(
        max(r[3] for r in result["rows"]) <= args.budget and result["final"]["compaction"]  # type: ignore[index, attr-defined]
        for result in results
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
