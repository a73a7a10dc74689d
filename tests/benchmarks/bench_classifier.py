"""Benchmark: the classifier service's /predict latency and what it adds to the router, service up and down.

Run: python tests/benchmarks/bench_classifier.py [--model-dir DIR] [--requests 200] [--batches 30]

Without --model-dir a model is trained on 1,200 generated seed examples in a temporary folder first.
The service runs in its own process (`python -m multihop_classifier serve`) on a loopback port, as in
production. Printed, one run, side by side:

* /predict p50/p95 for one question (features sent by the caller, as the router does, and computed by
  the service) and for a batch of 32 (also per question);
* the router's time per question (core.retrieval.routing.route with features already extracted, no
  model vote) with no classifier (the baseline), with the service up, with the service down (refused
  connection), and with a service that accepts but never answers (the 2 s timeout): first question and
  the rest, which the client's failure memory answers at once.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp
from aiohttp import web

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from adapters.models.classifier_client import HttpComplexityClassifier  # noqa: E402
from core.retrieval.complexity import extract_features, rule_score  # noqa: E402
from core.retrieval.routing import route  # noqa: E402
from multihop_classifier.cli import main as classifier_main  # noqa: E402
from multihop_classifier.data.generate import generate  # noqa: E402


def percentile(values: list[float], share: float) -> float:
    """The nearest-rank percentile (share in 0..1)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def free_port() -> int:
    """A port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def train_model(folder: Path) -> Path:
    """Generate 1,200 examples, train, eval and export; the export folder."""
    data = folder / "seed.jsonl"
    for argv in (
        ["generate", "--out", str(data)],
        ["train", "--data", str(data), "--out", str(folder / "run")],
        ["eval", "--model", str(folder / "run")],
        ["export", "--run", str(folder / "run"), "--out", str(folder / "models")],
    ):
        assert classifier_main(argv) == 0, argv
    return folder / "models"


async def timed(calls: int, call: Callable[[int], Awaitable[object]]) -> list[float]:
    """Seconds taken by each of ``calls`` sequential awaits."""
    timings = []
    for index in range(calls):
        started = time.perf_counter()
        await call(index)
        timings.append(time.perf_counter() - started)
    return timings


def line(label: str, timings: list[float], per: int = 1) -> str:
    """One row: p50 / p95 in milliseconds (and per question for batches)."""
    p50, p95 = percentile(timings, 0.5) * 1000, percentile(timings, 0.95) * 1000
    extra = f"   per question p50 {p50 / per:6.2f} ms" if per > 1 else ""
    return f"{label:<46} p50 {p50:8.2f} ms   p95 {p95:8.2f} ms   n={len(timings)}{extra}"


async def wait_ready(base: str) -> None:
    """Poll /health until the service is ready (60 s at most)."""
    async with aiohttp.ClientSession() as session, asyncio.timeout(60):
        while True:
            try:
                async with session.get(base + "/health") as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientConnectionError:
                pass
            await asyncio.sleep(0.1)


async def bench_predict(base: str, questions: list[str], requests: int, batches: int) -> list[str]:
    """/predict latency for single questions (features given / computed) and batches of 32."""
    features = [extract_features(q).as_dict() for q in questions]
    rows = []
    async with aiohttp.ClientSession() as session:

        async def post(body: object) -> None:
            async with session.post(base + "/predict", json=body) as response:
                assert response.status == 200, await response.text()
                await response.read()

        await post({"question": "warm up"})
        given = await timed(requests, lambda i: post({"question": questions[i], "features": features[i]}))
        computed = await timed(requests, lambda i: post({"question": questions[i]}))
        batch = await timed(
            batches,
            lambda i: post(
                [
                    {"question": q, "features": f}
                    for q, f in zip(questions[i : i + 32], features[i : i + 32], strict=True)
                ]
            ),
        )
    rows.append(line("/predict 1 question, features sent", given))
    rows.append(line("/predict 1 question, features computed", computed))
    rows.append(line("/predict batch of 32, features sent", batch, per=32))
    return rows


async def hanging_server() -> tuple[web.AppRunner, str]:
    """A server that accepts /predict and never answers in time."""

    async def hang(request: web.Request) -> web.Response:
        await asyncio.sleep(30)
        return web.json_response({})

    app = web.Application()
    app.router.add_post("/predict", hang)
    runner = web.AppRunner(app, shutdown_timeout=0.1)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    return runner, f"http://127.0.0.1:{port}"


async def bench_router(base: str, questions: list[str], requests: int) -> list[str]:
    """The router's time per question: no classifier, service up, refused, hanging (first and later)."""
    middle = [q for q in questions if 0.15 < rule_score(extract_features(q)) < 0.75]
    features = [extract_features(q) for q in middle]
    count = min(requests, len(middle))

    async def routed(classifier: HttpComplexityClassifier | None, index: int) -> None:
        await route(middle[index], features[index], mode="auto", engine=None, classifier=classifier)

    rows = [f"router: {len(middle)} of {len(questions)} questions in the rules' middle band; {count} timed"]
    baseline = await timed(count, lambda i: routed(None, i))
    rows.append(line("route, no classifier (baseline)", baseline))
    up = HttpComplexityClassifier(base)
    await routed(up, 0)
    with_service = await timed(count, lambda i: routed(up, i))
    await up.aclose()
    added = statistics.median(with_service) - statistics.median(baseline)
    rows.append(line("route, service up", with_service) + f"   added p50 {added * 1000:.2f} ms")
    down = HttpComplexityClassifier(f"http://127.0.0.1:{free_port()}")
    refused = await timed(count, lambda i: routed(down, i))
    await down.aclose()
    rows.append(line("route, service down (refused): first question", refused[:1]))
    rows.append(line("route, service down (refused): later questions", refused[1:]))
    runner, hanging_base = await hanging_server()
    hung = HttpComplexityClassifier(hanging_base, timeout=2.0)
    hanging = await timed(count, lambda i: routed(hung, i))
    await hung.aclose()
    await runner.cleanup()
    rows.append(line("route, service hanging (2 s timeout): first", hanging[:1]))
    rows.append(line("route, service hanging: later questions", hanging[1:]))
    rows.append(
        f"without the failure memory every later question would wait the full 2 s ({count - 1} x 2 s)"
    )
    return rows


async def run(args: argparse.Namespace, models: Path) -> None:
    """Start the service process, run both benchmarks, stop it."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    command = [
        sys.executable,
        "-m",
        "multihop_classifier",
        "serve",
        "--model-dir",
        str(models),
        "--port",
        str(port),
    ]
    process = await asyncio.create_subprocess_exec(
        *command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        await wait_ready(base)
        questions = [e.question for e in generate(max(args.requests, 32 * args.batches + 32), seed=99)]
        for row in await bench_predict(base, questions, args.requests, args.batches):
            print(row)
        for row in await bench_router(base, questions, args.requests):
            print(row)
    finally:
        process.terminate()
        await asyncio.wait_for(process.wait(), 30)


def main() -> None:
    """Parse arguments, train a model when none is given, run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model-dir", type=Path)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--batches", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        models = args.model_dir or train_model(Path(folder))
        asyncio.run(run(args, models))


if __name__ == "__main__":
    main()
