"""Benchmark: 20 Slack threads asking at once, through the real bot, pipeline and an OpenAI-compatible model.

Run: /tmp/venv/bin/python tests/benchmarks/bench_slack.py [--threads 20] [--waves 1] [--delay 0.3]

Setup: the mock Slack Web API enforces a Tier-3 budget on chat.update (50 per sliding minute, 429 with
Retry-After beyond it); the bot (SlackBot + Bolt AsyncApp served over HTTP, production throttling: one
edit per second per message, 50 updates per minute for the workspace) answers with core's Pipeline
(single search over an in-memory knowledge base, LlmEngine over adapters.models.openai_chat) against the test
model server answering every call after --delay seconds (streamed). Each thread gets one signed
app_mention at the same moment.

Prints: ack latency p50/p99 (target p99 < 200 ms), time to placeholder p50/p95 (target p95 < 1 s),
time to final answer p50/p95, chat.update calls per answer (mean/max), 429s seen by the mock (target 0).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from adapters.models.openai_chat import OpenAIChatModel  # noqa: E402
from adapters.slack.app import SlackOptions  # noqa: E402
from adapters.slack.channel_config import ChannelConfig  # noqa: E402
from bot.settings import Settings  # noqa: E402
from core.answering.llm_engine import LlmEngine  # noqa: E402
from core.conversation.history import BoundedHistoryLoader  # noqa: E402
from core.conversation.locks import LocalConversationLock  # noqa: E402
from core.pipeline import Pipeline  # noqa: E402
from core.retrieval.single_search import SingleSearchRetriever  # noqa: E402
from tests.fakes import FakeKnowledgeBase, InMemoryConversationStore  # noqa: E402
from tests.model_server import ModelServer  # noqa: E402
from tests.slack.harness import SlackHarness  # noqa: E402
from tests.slack.mock_slack_api import MockSlackApi  # noqa: E402


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile (share in 0..1)."""
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(share * len(ordered) + 0.5) - 1))]


def build_pipeline(base_url: str) -> Pipeline:
    kb = FakeKnowledgeBase()
    for i in range(50):
        kb.add(
            f"p{i}",
            f"Service {i} deploys with make deploy-{i} and rolls back in {i} minutes.",
            document=f"Runbook {i}",
            dataset="docs",
            heading="Deploy",
        )
    model = OpenAIChatModel(base_url=base_url, api_key="test", model="test-model", timeout=30)
    store = InMemoryConversationStore()
    return Pipeline(
        store=store,
        lock=LocalConversationLock(),
        context_loader=BoundedHistoryLoader(store, dialogue_number=5),
        retriever=SingleSearchRetriever(kb),
        engine=LlmEngine(chat=model, aux=model),
    )


async def run(threads: int, waves: int, delay: float) -> None:
    mock = await MockSlackApi().start()
    mock.tier_limit("chat.update", per_minute=50)
    model_server = ModelServer(
        delay=delay, responder=lambda r: "Service runbooks say: make deploy, then verify [1]. " * 6
    )
    await model_server.start()
    settings = Settings(channels={"default": ChannelConfig(datasets=["docs"], retrieval_mode="single")})
    harness = await SlackHarness(
        pipeline=build_pipeline(model_server.base_url), settings=settings, options=SlackOptions(), mock=mock
    ).start()
    acks: list[float] = []
    sent_at: dict[str, float] = {}

    async def ask(wave: int, index: int) -> None:
        ts = f"{3000 + wave}.{index:06d}"
        started = time.monotonic()
        sent_at[ts] = started
        status = await harness.event(harness.mention(f"How does service {index} deploy?", ts=ts))
        acks.append(time.monotonic() - started)
        assert status == 200

    began = time.monotonic()
    for wave in range(waves):
        await asyncio.gather(*(ask(wave, i) for i in range(threads)))
        await harness.bot.wait_idle(300)
    elapsed = time.monotonic() - began
    placeholders, finals, updates = [], [], []
    for ts, started in sent_at.items():
        replies = mock.thread("C1", ts)
        assert len(replies) == 1, f"thread {ts} has {len(replies)} replies"
        post = next(c for c in mock.calls_to("chat.postMessage") if c.params.get("thread_ts") == ts)
        edits = [c for c in mock.calls_to("chat.update") if c.params.get("ts") == replies[0].ts]
        placeholders.append(post.at - started)
        finals.append(edits[-1].at - started)
        updates.append(len(edits))
        assert "Sources" in replies[0].block_text(), replies[0].block_text()[:200]
    await harness.close()
    await model_server.stop()
    await mock.close()
    n = len(sent_at)
    print(
        f"threads: {threads} x {waves} wave(s) = {n} answers in {elapsed:.1f} s; model delay {delay * 1000:.0f} ms/call"
    )
    print(
        f"ack latency:          p50 {percentile(acks, 0.5) * 1000:7.1f} ms   p99 {percentile(acks, 0.99) * 1000:7.1f} ms   (target p99 < 200 ms)"
    )
    print(
        f"time to placeholder:  p50 {percentile(placeholders, 0.5) * 1000:7.1f} ms   p95 {percentile(placeholders, 0.95) * 1000:7.1f} ms   (target p95 < 1000 ms)"
    )
    print(
        f"time to final answer: p50 {percentile(finals, 0.5):7.2f} s    p95 {percentile(finals, 0.95):7.2f} s"
    )
    print(
        f"chat.update per answer: mean {statistics.mean(updates):.2f}  max {max(updates)}  (total {sum(updates)}, Tier-3 budget 50/min)"
    )
    print(
        f"429 responses: {sum(mock.rate_limited.values())} (target 0)   block-kit violations: {len(mock.violations)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=20)
    parser.add_argument("--waves", type=int, default=1)
    parser.add_argument("--delay", type=float, default=0.3)
    args = parser.parse_args()
    asyncio.run(run(args.threads, args.waves, args.delay))


if __name__ == "__main__":
    main()
