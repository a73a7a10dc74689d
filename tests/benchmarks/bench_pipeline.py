"""Benchmark: orchestration overhead of one follow-up question, and event-loop lag under 20 conversations.

The OpenAI-compatible test server answers every call after a fixed 200 ms. Overhead = end-to-end time minus
the time spent waiting on the model (measured by a timing wrapper around the ChatModel port). Run:

    python tests/benchmarks/bench_pipeline.py [--chunks 10000] [--questions 30]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from adapters.models.openai_chat import OpenAIChatModel  # noqa: E402
from bot.cli import main as kb_main  # noqa: E402
from bot.compose import build_services  # noqa: E402
from bot.settings import Settings  # noqa: E402
from core.answering.llm_engine import LlmEngine  # noqa: E402
from core.commands import Ask  # noqa: E402
from core.models import Completion, ConversationKey, ConversationScope, Message  # noqa: E402
from tests.model_server import ModelServer  # noqa: E402
from tests.role_responder import RoleResponder  # noqa: E402

CMRC = ROOT.parent / "shared" / "data" / "zh_cmrc2018" / "cmrc2018_dev_squad_style.json"


class TimedModel:
    """A ChatModel wrapper that adds up the time spent waiting on the wrapped model."""

    def __init__(self, inner: OpenAIChatModel) -> None:
        self.inner = inner
        self.waited = 0.0

    @property
    def name(self) -> str:
        return self.inner.name

    async def complete(self, messages: Sequence[Message], **kwargs: Any) -> Completion:
        started = time.monotonic()
        try:
            return await self.inner.complete(messages, **kwargs)
        finally:
            self.waited += time.monotonic() - started

    async def stream(self, messages: Sequence[Message], **kwargs: Any) -> AsyncIterator[str | Completion]:
        started = time.monotonic()
        try:
            async for item in self.inner.stream(messages, **kwargs):
                yield item
        finally:
            self.waited += time.monotonic() - started


def write_corpus(folder: Path, chunks: int) -> list[str]:
    """About `chunks` paragraphs from CMRC 2018 passages, 100 per Markdown file; returns some passage texts."""
    contexts = [
        p["context"]
        for doc in json.loads(CMRC.read_text(encoding="utf-8"))["data"]
        for p in doc["paragraphs"]
    ]
    paragraphs = []
    while len(paragraphs) < chunks:
        for context in contexts:
            paragraphs.append(f"{context[:180]}(第{len(paragraphs)}段)")
            if len(paragraphs) >= chunks:
                break
    for start in range(0, len(paragraphs), 100):
        body = "\n\n".join(
            f"## 段落 {i}\n\n{text}" for i, text in enumerate(paragraphs[start : start + 100], start)
        )
        (folder / f"doc_{start // 100:04d}.md").write_text(
            f"# 文档 {start // 100}\n\n{body}\n", encoding="utf-8"
        )
    return contexts


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def measure(args: argparse.Namespace, contexts: list[str]) -> None:
    responder = RoleResponder()
    async with ModelServer(delay=0.2, responder=responder) as server:
        os.environ.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="bench", KB_CHAT_MODEL=server.model)
        settings = Settings()
        model = TimedModel(OpenAIChatModel(base_url=server.base_url, model=server.model, api_key="bench"))
        engine = LlmEngine(chat=model, aux=model)  # type: ignore[arg-type]
        async with build_services(settings, engine=engine) as services:
            overheads, ratios = [], []
            for i in range(args.questions):
                key = ConversationKey(source="bench", channel_id=f"c{i}")
                topic = contexts[i % len(contexts)][:12]
                await services.pipeline.answer(
                    Ask(key, f"{topic}是什么?", ConversationScope(("bench",), retrieval_mode="single"))
                )
                model.waited = 0.0
                started = time.monotonic()
                result = await services.pipeline.answer(
                    Ask(key, "那它后来怎么样了?", ConversationScope(("bench",), retrieval_mode="single"))
                )
                total = time.monotonic() - started
                assert not hasattr(result, "code"), result
                overheads.append(total - model.waited)
                ratios.append((total - model.waited) / model.waited)
            print(
                f"follow-up, single-hop, {args.chunks} chunks, model at 200 ms/call, {args.questions} questions"
            )
            print(
                f"  overhead p50 {pct(overheads, 0.5) * 1000:.0f} ms  p95 {pct(overheads, 0.95) * 1000:.0f} ms"
            )
            print(
                f"  overhead / model wait: p50 {pct(ratios, 0.5):.1%}  p95 {pct(ratios, 0.95):.1%} (target p50 < 10%)"
            )

            lags: list[float] = []
            stop = asyncio.Event()

            async def ticker() -> None:
                while not stop.is_set():
                    before = time.monotonic()
                    await asyncio.sleep(0.01)
                    lags.append(time.monotonic() - before - 0.01)

            async def converse(n: int) -> None:
                key = ConversationKey(source="bench-load", channel_id=f"load{n}")
                for text in (f"{contexts[n][:12]}是什么?", "那它有什么特点?"):
                    event = await services.pipeline.answer(Ask(key, text, ConversationScope(("bench",))))
                    assert not hasattr(event, "code"), event

            tick = asyncio.create_task(ticker())
            started = time.monotonic()
            await asyncio.gather(*(converse(n) for n in range(20)))
            stop.set()
            await tick
            print(
                f"20 conversations x 2 questions at once (auto routing): {time.monotonic() - started:.1f} s"
            )
            print(
                f"  event-loop lag p50 {statistics.median(lags) * 1000:.1f} ms  p99 {pct(lags, 0.99) * 1000:.1f} ms"
                f"  max {max(lags) * 1000:.1f} ms (target p99 < 100 ms)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=int, default=10000)
    parser.add_argument("--questions", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as docs:
        os.environ["KB_HOME"] = home
        os.environ["KB_DATASETS"] = "bench"
        contexts = write_corpus(Path(docs), args.chunks)
        started = time.monotonic()
        assert kb_main(["ingest", docs, "--dataset", "bench"]) == 0
        print(f"ingested {args.chunks} chunks in {time.monotonic() - started:.1f} s (embedding included)")
        asyncio.run(measure(args, contexts))


if __name__ == "__main__":
    main()
