"""Benchmark: 50 questions at once in one Slack channel and in 50 channels, through the real bot, pipeline
and an OpenAI-compatible model, against a mock Slack that enforces Slack's posting limits.

Run: python tests/benchmarks/bench_slack.py [--questions 50] [--delay 0.3] [--scenario both|one|many]
     [--storm SECONDS]
     python tests/benchmarks/bench_slack.py --paths [--questions 20] [--delay 0.3]

--paths compares the two ways an answer shows up: edited in place (KB_SLACK_STREAMING=edit) and natively
streamed (auto), side by side in one run: the same questions, one per channel, all at once, with the model
streaming its answer in 30 deltas 0.1 s apart. It prints answered, Slack API calls per answer (and per
method), and the time from the question to the first call that made answer text visible (p50/p95), and
to the final answer, with the streamed/edited ratio. The mock also enforces the streaming tiers
(chat.startStream and chat.stopStream 20 per minute, chat.appendStream 100 per minute).

Setup: the mock Slack Web API answers 429 with Retry-After beyond Slack's published limits:
chat.postMessage about 1 per second per channel with a burst of 3, and 300 per minute for the workspace;
chat.update 50 per sliding minute for the workspace (Tier 3); chat.startStream and chat.stopStream 20,
chat.appendStream 100 per minute (Tiers 2 and 4). The bot (SlackBot + Bolt AsyncApp served
over HTTP, production options: native streaming where Slack allows it, one edit per second per message, 50 updates per minute, posts paced at one
per second per channel with a burst of 2) answers with core's Pipeline (single search over an in-memory
knowledge base, LlmEngine over adapters.models.openai_chat, an in-memory store) against the test model
server answering every call after --delay seconds (streamed). Every question is one signed app_mention in
its own thread, all sent at the same moment. --storm N also answers every post and edit with 429
(Retry-After 1) for the first N seconds, far past slack_sdk's own retries.

Prints per scenario: answered (the final answer visible in its thread), lost (nothing visible),
stranded placeholders ("⏳" still showing), 429s the mock sent, deliveries recorded as delivered/failed,
ack latency, time to placeholder and time to final answer (p50/p95), and next to the final-answer time
the floor Slack's per-channel limit imposes (the last of n posts in one channel cannot leave before
(n - burst) / rate seconds), with the ratio achieved/floor.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from adapters.models.openai_chat import OpenAIChatModel  # noqa: E402
from adapters.slack.app import SlackOptions  # noqa: E402
from adapters.slack.delivery.ledger import DeliveryState  # noqa: E402
from adapters.slack.inbound.channel_config import ChannelConfig  # noqa: E402
from bot.settings import Settings  # noqa: E402
from core.answering.llm_engine import LlmEngine  # noqa: E402
from core.conversation.history import BoundedHistoryLoader  # noqa: E402
from core.conversation.locks import LocalConversationLock  # noqa: E402
from core.pipeline import Pipeline  # noqa: E402
from core.retrieval.single_search import SingleSearchRetriever  # noqa: E402
from tests.fakes import FakeKnowledgeBase, InMemoryConversationStore  # noqa: E402
from tests.model_script import Reply  # noqa: E402
from tests.model_server import ModelServer  # noqa: E402
from tests.slack.harness import SlackHarness  # noqa: E402
from tests.slack.mock_slack_api import ApiCall, MockSlackApi  # noqa: E402

CHANNEL_RATE, CHANNEL_BURST = 1.0, 3  # what the mock enforces per channel (Slack: ~1/s, short bursts)
WORKSPACE_POSTS_PER_MINUTE = 300
UPDATES_PER_MINUTE = 50
STREAM_TIERS = {"chat.startStream": 20, "chat.stopStream": 20, "chat.appendStream": 100}
FINAL_MARK = "kb_answer_"  # the block_id of the actions block that only final answers carry


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile (share in 0..1); nan for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(share * len(ordered) + 0.5) - 1))]


def build_pipeline(base_url: str, store: InMemoryConversationStore) -> tuple[Pipeline, OpenAIChatModel]:
    kb = FakeKnowledgeBase()
    for i in range(50):
        kb.add(
            f"p{i}",
            f"Service {i} deploys with make deploy-{i} and rolls back in {i} minutes.",
            document=f"Runbook {i}",
            dataset="docs",
            heading="Deploy",
        )
    model = OpenAIChatModel(base_url=base_url, api_key="test", model="test-model", timeout=60)
    pipeline = Pipeline(
        records=store,
        lock=LocalConversationLock(),
        context_loader=BoundedHistoryLoader(store, dialogue_number=5),
        retriever=SingleSearchRetriever(kb),
        engine=LlmEngine(chat=model, aux=model),
    )
    return pipeline, model


@dataclass
class Result:
    """One scenario's figures."""

    name: str
    questions: int
    answered: int
    lost: int
    stranded: int
    rate_limited: int
    delivered: int
    failed_deliveries: int
    acks: list[float]
    placeholders: list[float]
    finals: list[float]
    floor: float
    elapsed: float


def _shows_final(call: ApiCall) -> bool:
    return call.status == 200 and FINAL_MARK in str(call.params.get("blocks") or "")


async def run(name: str, questions: int, channels: int, delay: float, storm: float) -> Result:
    mock = await MockSlackApi().start()
    mock.channel_post_limit(per_second=CHANNEL_RATE, burst=CHANNEL_BURST)
    mock.tier_limit("chat.postMessage", per_minute=WORKSPACE_POSTS_PER_MINUTE)
    mock.tier_limit("chat.update", per_minute=UPDATES_PER_MINUTE)
    for method, per_minute in STREAM_TIERS.items():
        mock.tier_limit(method, per_minute=per_minute)
    if storm:  # Slack refusing every post and edit for a while (another app, an incident)
        mock.throttle_for("chat.postMessage", storm, retry_after=1)
        mock.throttle_for("chat.update", storm, retry_after=1)
    model_server = ModelServer(
        delay=delay, responder=lambda r: "Service runbooks say: make deploy, then verify [1]. " * 6
    )
    await model_server.start()
    store = InMemoryConversationStore()
    pipeline, model = build_pipeline(model_server.base_url, store)
    settings = Settings(channels={"default": ChannelConfig(datasets=["docs"], retrieval_mode="single")})
    harness = await SlackHarness(
        pipeline=pipeline,
        store=store,
        settings=settings,
        options=SlackOptions(),
        mock=mock,
    ).start()
    acks: list[float] = []
    sent: dict[tuple[str, str], float] = {}

    async def ask(index: int) -> None:
        channel, ts = f"C{index % channels:03d}", f"3000.{index:06d}"
        started = time.monotonic()
        sent[(channel, ts)] = started
        status = await harness.event(
            harness.mention(f"How does service {index} deploy?", ts=ts, channel=channel)
        )
        acks.append(time.monotonic() - started)
        assert status == 200, status

    began = time.monotonic()
    await asyncio.gather(*(ask(i) for i in range(questions)))
    await harness.bot.wait_idle(900)
    deadline = time.monotonic() + 120  # anything handed to the re-deliverer gets its chance

    def settled() -> bool:
        return all(
            store.deliveries.get(r.id) is None
            or store.deliveries[r.id].state in (DeliveryState.DELIVERED, DeliveryState.FAILED)
            for r in store.records.values()
        )

    with contextlib.suppress(AssertionError):
        await mock.wait_for(settled, within=max(0.0, deadline - time.monotonic()))
    elapsed = time.monotonic() - began
    thread_of = {ts: (m.channel, m.thread_ts) for (_, ts), m in mock.messages.items()}
    first_post: dict[tuple[str, str], float] = {}
    first_final: dict[tuple[str, str], float] = {}
    for call in mock.calls:
        if call.status != 200:
            continue
        if call.method in ("chat.postMessage", "chat.startStream"):  # a new reply: a post or a stream
            thread = (str(call.params.get("channel")), str(call.params.get("thread_ts")))
            first_post.setdefault(thread, call.at)
        elif call.method in ("chat.update", "chat.appendStream", "chat.stopStream"):
            thread = thread_of.get(str(call.params.get("ts")), ("", ""))
        else:
            continue
        if _shows_final(call):
            first_final.setdefault(thread, call.at)
    answered = lost = stranded = 0
    placeholders, finals = [], []
    for (channel, ts), started in sent.items():
        replies = mock.thread(channel, ts)
        texts = [m.block_text() for m in replies]
        if any(FINAL_MARK in str(m.blocks) for m in replies):
            answered += 1
        elif not replies:
            lost += 1
        stranded += sum("⏳" in text for text in texts)
        if (channel, ts) in first_post:
            placeholders.append(first_post[(channel, ts)] - started)
        if (channel, ts) in first_final:
            finals.append(first_final[(channel, ts)] - started)
    per_channel = -(-questions // channels)
    floor = max(0.0, (per_channel - CHANNEL_BURST) / CHANNEL_RATE)
    states = [delivery.state for delivery in store.deliveries.values()]
    result = Result(
        name=name,
        questions=questions,
        answered=answered,
        lost=lost,
        stranded=stranded,
        rate_limited=sum(mock.rate_limited.values()),
        delivered=states.count(DeliveryState.DELIVERED),
        failed_deliveries=states.count(DeliveryState.FAILED),
        acks=acks,
        placeholders=placeholders,
        finals=finals,
        floor=floor,
        elapsed=elapsed,
    )
    await harness.close()
    await model.aclose()
    await model_server.stop()
    await mock.close()
    return result


def report(result: Result, delay: float) -> None:
    ms = 1000
    p95 = percentile(result.finals, 0.95)
    ratio = f"{p95 / result.floor:.2f}x the floor" if result.floor else "no per-channel floor"
    print(f"== {result.name}: {result.questions} questions at once, model delay {delay * ms:.0f} ms/call ==")
    print(
        f"answered {result.answered}/{result.questions}   lost {result.lost}   stranded placeholders "
        f"{result.stranded}   429s {result.rate_limited}   deliveries delivered {result.delivered} / "
        f"failed {result.failed_deliveries}   (all settled in {result.elapsed:.1f} s)"
    )
    print(
        f"ack latency:          p50 {percentile(result.acks, 0.5) * ms:7.1f} ms   "
        f"p99 {percentile(result.acks, 0.99) * ms:7.1f} ms"
    )
    print(
        f"time to first post:   p50 {percentile(result.placeholders, 0.5):7.2f} s    "
        f"p95 {percentile(result.placeholders, 0.95):7.2f} s"
    )
    print(
        f"time to final answer: p50 {percentile(result.finals, 0.5):7.2f} s    p95 {p95:7.2f} s   "
        f"(Slack's per-channel floor for the last post {result.floor:.1f} s; p95 = {ratio})"
    )


ANSWER_MARK = "Service runbooks say"  # words only the model's answer contains


@dataclass
class PathResult:
    """One path's figures in the --paths comparison."""

    name: str
    questions: int
    answered: int
    calls: dict[str, int]
    first_text: list[float]
    finals: list[float]


def _shows_text(call: ApiCall) -> bool:
    """Whether this call put answer text in front of the reader (a post, an edit, or a stream chunk)."""
    if call.status != 200:
        return False
    if call.method in ("chat.postMessage", "chat.update"):
        return ANSWER_MARK in str(call.params.get("blocks") or "")
    if call.method in ("chat.startStream", "chat.appendStream", "chat.stopStream"):
        return ANSWER_MARK in str(call.params.get("chunks") or "") + str(
            call.params.get("markdown_text") or ""
        )
    return False


async def run_path(name: str, streaming: str, questions: int, delay: float) -> PathResult:
    mock = await MockSlackApi().start()
    mock.channel_post_limit(per_second=CHANNEL_RATE, burst=CHANNEL_BURST)
    mock.tier_limit("chat.postMessage", per_minute=WORKSPACE_POSTS_PER_MINUTE)
    mock.tier_limit("chat.update", per_minute=UPDATES_PER_MINUTE)
    for method, per_minute in STREAM_TIERS.items():
        mock.tier_limit(method, per_minute=per_minute)
    answer = "Service runbooks say: make deploy, then verify [1]. " * 6
    model_server = ModelServer(
        delay=delay, responder=lambda r: Reply.text(answer, chunks=30, chunk_delay=0.1)
    )
    await model_server.start()
    store = InMemoryConversationStore()
    pipeline, model = build_pipeline(model_server.base_url, store)
    settings = Settings(channels={"default": ChannelConfig(datasets=["docs"], retrieval_mode="single")})
    harness = await SlackHarness(
        pipeline=pipeline,
        store=store,
        settings=settings,
        options=SlackOptions(streaming=streaming),
        mock=mock,  # type: ignore[arg-type]
    ).start()
    sent: dict[str, float] = {}

    async def ask(index: int) -> None:
        channel, ts = f"C{index:03d}", f"3100.{index:06d}"
        sent[channel] = time.monotonic()
        status = await harness.event(
            harness.mention(f"How does service {index} deploy?", ts=ts, channel=channel)
        )
        assert status == 200, status

    await asyncio.gather(*(ask(i) for i in range(questions)))
    await harness.bot.wait_idle(600)
    channel_of = {ts: channel for (channel, ts) in mock.messages}
    first_text: dict[str, float] = {}
    final: dict[str, float] = {}
    calls: dict[str, int] = {}
    for call in mock.calls:
        if call.method == "auth.test" or call.status != 200:
            continue
        calls[call.method] = calls.get(call.method, 0) + 1
        channel = str(call.params.get("channel") or channel_of.get(str(call.params.get("ts")), ""))
        if channel not in sent:
            continue
        if _shows_text(call):
            first_text.setdefault(channel, call.at - sent[channel])
        if FINAL_MARK in str(call.params.get("blocks") or ""):
            final.setdefault(channel, call.at - sent[channel])
    answered = sum(
        any(FINAL_MARK in str(m.blocks) for m in mock.thread(f"C{i:03d}", f"3100.{i:06d}"))
        for i in range(questions)
    )
    await harness.close()
    await model.aclose()
    await model_server.stop()
    await mock.close()
    return PathResult(name, questions, answered, calls, list(first_text.values()), list(final.values()))


def report_paths(results: list[PathResult], delay: float) -> None:
    print(
        f"== answer paths: {results[0].questions} questions at once, one per channel; model delay "
        f"{delay * 1000:.0f} ms, then 30 deltas 0.1 s apart =="
    )
    for result in results:
        per_answer = sum(result.calls.values()) / max(1, result.answered)
        methods = ", ".join(f"{m} {n / max(1, result.answered):.1f}" for m, n in sorted(result.calls.items()))
        print(
            f"{result.name:>9}: answered {result.answered}/{result.questions}   Slack API calls per answer {per_answer:.1f} ({methods})"
        )
        print(
            f"{'':>9}  first visible answer text p50 {percentile(result.first_text, 0.5):5.2f} s  "
            f"p95 {percentile(result.first_text, 0.95):5.2f} s   final answer p50 "
            f"{percentile(result.finals, 0.5):5.2f} s  p95 {percentile(result.finals, 0.95):5.2f} s"
        )
    if len(results) == 2:
        edit, native = results
        ratio = percentile(native.first_text, 0.5) / percentile(edit.first_text, 0.5)
        calls = (sum(native.calls.values()) / max(1, native.answered)) / (
            sum(edit.calls.values()) / max(1, edit.answered)
        )
        print(f"streamed / edited: first visible text p50 {ratio:.2f}x, calls per answer {calls:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--delay", type=float, default=0.3)
    parser.add_argument("--scenario", choices=("both", "one", "many"), default="both")
    parser.add_argument(
        "--storm", type=float, default=0.0, help="seconds of 429 on every post and edit at the start"
    )
    parser.add_argument("--paths", action="store_true", help="compare edit-in-place and native streaming")
    args = parser.parse_args()
    if args.paths:
        questions = args.questions if args.questions != 50 else 20
        results = [
            asyncio.run(run_path(name, streaming, questions, args.delay))
            for name, streaming in (("edited", "edit"), ("streamed", "auto"))
        ]
        report_paths(results, args.delay)
        return
    scenarios = []
    if args.scenario in ("both", "one"):
        scenarios.append(("one channel", 1))
    if args.scenario in ("both", "many"):
        scenarios.append((f"{args.questions} channels", args.questions))
    for name, channels in scenarios:
        report(asyncio.run(run(name, args.questions, channels, args.delay, args.storm)), args.delay)


if __name__ == "__main__":
    main()
