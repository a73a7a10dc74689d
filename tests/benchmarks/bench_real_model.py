"""Benchmark a live local model against the extractive engine on the Chinese law dev set, in one run.

    python tests/benchmarks/bench_real_model.py --base-url http://127.0.0.1:19200/v1 --limit 10

The server is --base-url, else KB_BENCH_MODEL_URL, else OPENAI_BASE_URL; when none is set or none answers
GET /v1/models, the benchmark prints why it is skipped and exits 0. The knowledge base is
../shared/data/zh_laws, ingested in place with `kb ingest` (idempotent) into --home (kept between runs).
The same questions (tests/eval/laws_zh.jsonl, the first --limit) go through the `kb eval` runner twice:
with the extractive engine, then with the model (every HTTP call through the recording proxy of
tests/replay, which times it and names its role from the system prompt). One table: the `kb eval` figures
side by side, then model calls per question by role, time to the first answer token, answer time p50/p95
and tokens/s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import aiohttp  # noqa: E402

from bot.compose import search_policy  # noqa: E402
from bot.evaluation.questions import EvalQuestion, parse_lines  # noqa: E402
from bot.evaluation.report import ROWS, _pad, _width, cell  # noqa: E402
from bot.evaluation.runner import EvalRunner, QuestionResult, RunOptions  # noqa: E402
from bot.evaluation.services import observed_services  # noqa: E402
from bot.evaluation.summary import summarise  # noqa: E402
from bot.settings import Settings  # noqa: E402
from core.answering import prompts  # noqa: E402
from core.knowledge.search import parse_mode  # noqa: E402
from tests.replay.proxy import RecordingProxy, Timing, upstream_origin  # noqa: E402

QUESTIONS = ROOT / "tests" / "eval" / "laws_zh.jsonl"
CORPUS = ROOT.parent / "shared" / "data" / "zh_laws"
DATASET = "laws"
ROLE_PROMPTS = {
    "rewrite": prompts.REWRITE_SYSTEM,
    "assess": prompts.ASSESS_SYSTEM,
    "vote": prompts.VOTE_SYSTEM,
    "summary": prompts.SUMMARY_SYSTEM_PROMPT_ZH,
    "summary_en": prompts.SUMMARY_SYSTEM_PROMPT_EN,
    "answer": prompts.ANSWER_SYSTEM_ZH,
    "answer_en": prompts.ANSWER_SYSTEM_EN,
}
HTTP_ROLES = ("rewrite", "vote", "assess", "summary", "answer", "other")


def role_of(body: Any) -> str:
    """The model role of a chat request, from the start of its system prompt."""
    messages = body.get("messages") if isinstance(body, dict) else None
    system = next((m.get("content") or "" for m in messages or [] if m.get("role") == "system"), "")
    for role, template in ROLE_PROMPTS.items():
        prefix = template.split("{", 1)[0][:24]
        if prefix and str(system).startswith(prefix):
            return role.removesuffix("_en")
    return "other"


@dataclass
class ModelCall:
    """One HTTP chat call of a scored question."""

    role: str
    status: int
    timing: Timing
    completion_tokens: int = 0
    prompt_tokens: int = 0
    server_decode_tps: float | None = None  # llama.cpp's own timings, when sent


@dataclass
class ModelFigures:
    """What the proxy saw for each scored question (same order as the results)."""

    calls: list[list[ModelCall]] = field(default_factory=list)
    first_token: list[float] = field(default_factory=list)  # question start -> first answer delta


def _usage(chunks: Sequence[Any] | None, body: Any) -> tuple[int, int, float | None]:
    items = list(chunks or []) + ([body] if isinstance(body, dict) else [])
    prompt = completion = 0
    decode: float | None = None
    for item in items:
        if not isinstance(item, dict):
            continue
        usage = item.get("usage") or {}
        prompt = int(usage.get("prompt_tokens") or prompt)
        completion = int(usage.get("completion_tokens") or completion)
        timings = item.get("timings") or {}
        decode = timings.get("predicted_per_second", decode)
    return prompt, completion, decode


class TimedPipeline:
    """Notes when each question starts (EvalRunner asks a question's setup turns through it too)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.started: list[tuple[str, float]] = []

    async def answer(self, question: Any) -> Any:
        self.started.append((question.text, time.monotonic()))
        return await self._inner.answer(question)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def scored_starts(
    started: Sequence[tuple[str, float]], questions: Sequence[EvalQuestion]
) -> list[float | None]:
    """When each question's scored ask began (None when a setup turn failed and it was never asked)."""
    out: list[float | None] = []
    cursor = 0
    for item in questions:
        cursor += len(item.turns)
        if cursor < len(started) and started[cursor][0] == item.question:
            out.append(started[cursor][1])
            cursor += 1
        else:
            out.append(None)
            cursor = next((i for i in range(cursor, len(started)) if started[i][0] != item.question), cursor)
    return out


async def server_answers(base_url: str) -> str | None:
    """The first model id the server lists, or None when nothing answers."""
    try:
        timeout = aiohttp.ClientTimeout(total=10)
        async with (
            aiohttp.ClientSession(timeout=timeout) as session,
            session.get(f"{upstream_origin(base_url)}/v1/models") as response,
        ):
            data = await response.json(content_type=None)
        return str((data.get("data") or [{}])[0].get("id") or "model")
    except (aiohttp.ClientError, ValueError, TimeoutError, AttributeError):
        return None


def ingest_laws(home: Path, corpus: Path) -> None:
    """`kb ingest` of the law corpus into KB_HOME=home (idempotent: unchanged files write nothing)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KB_", "OPENAI_"))}
    env["KB_HOME"] = str(home)
    started = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "bot", "ingest", str(corpus), "--dataset", DATASET],
        cwd=ROOT,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    print(f"bench: knowledge base ready in {time.monotonic() - started:.0f} s ({home})", file=sys.stderr)


async def run_engine(
    settings: Settings, questions: Sequence[EvalQuestion], *, label: str
) -> tuple[list[QuestionResult], TimedPipeline]:
    """The kb eval runner over the questions with these settings."""
    async with observed_services(settings) as (services, observed_kb, counting_engine):
        options = RunOptions(
            datasets=(DATASET,),
            search_mode=parse_mode(settings.search.mode),
            tiers=search_policy(settings).tiers,
        )
        timed = TimedPipeline(services.pipeline)
        runner = EvalRunner(timed, observed_kb, counting_engine, options)  # type: ignore[arg-type]
        started = time.monotonic()

        def progress(result: QuestionResult) -> None:
            print(
                f"bench: {label} {result.id} {result.seconds:.1f} s {result.engine} notice={result.notice}"
                f" {result.error}",
                file=sys.stderr,
                flush=True,
            )

        results = await runner.run(questions, progress=progress)
        print(
            f"bench: {label}: {len(results)} questions in {time.monotonic() - started:.0f} s", file=sys.stderr
        )
    return results, timed


def model_figures(
    proxy: RecordingProxy, starts: Sequence[float | None], asks: Sequence[float]
) -> ModelFigures:
    """The proxy's chat calls of each scored question: those begun after its start, before the next ask."""
    figures = ModelFigures()
    for start in starts:
        if start is None:
            figures.calls.append([])
            continue
        end = min((t for t in asks if t > start), default=float("inf"))
        calls = []
        for interaction, timing in zip(proxy.interactions, proxy.timings, strict=True):
            if not start <= timing.started < end or not interaction.path.startswith("/v1/chat/completions"):
                continue
            response = interaction.response
            prompt, completion, decode = _usage(response.chunks, response.body)
            calls.append(
                ModelCall(role_of(interaction.body), response.status, timing, completion, prompt, decode)
            )
        figures.calls.append(calls)
        answers = [c for c in calls if c.role == "answer" and c.timing.first_content is not None]
        if answers and answers[-1].timing.first_content is not None:
            figures.first_token.append(answers[-1].timing.first_content - start)
    return figures


def _p(values: Sequence[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _pair(values: Sequence[float], digits: int = 1) -> str:
    low, high = _p(values, 0.5), _p(values, 0.95)
    return "—" if low is None or high is None else f"{low:.{digits}f} / {high:.{digits}f}"


def extra_rows(results: Sequence[QuestionResult], figures: ModelFigures | None) -> list[tuple[str, str]]:
    """The rows only a live model has: HTTP calls by role, first answer token, tokens/s."""
    if figures is None:
        return [(label, "—") for label in ("answers not by the model (fallback)", *_MODEL_LABELS)]
    fallback = sum(1 for r in results if r.status == "answered" and not r.engine.startswith("model:"))
    rows = [("answers not by the model (fallback)", f"{fallback}/{len(results)}")]
    calls = [c for question in figures.calls for c in question]
    per_role = Counter(c.role for c in calls)
    asked = max(1, len(figures.calls))
    answers = [c for c in calls if c.role == "answer" and c.timing.first_content is not None]
    prefill = [c.timing.first_content - c.timing.started for c in answers if c.timing.first_content]
    decode = [
        c.completion_tokens / (c.timing.ended - c.timing.first_content)
        for c in calls
        if c.timing.first_content and c.completion_tokens > 1 and c.timing.ended > c.timing.first_content
    ]
    server = [c.server_decode_tps for c in calls if c.server_decode_tps]
    values = [
        "·".join(f"{per_role[role] / asked:.2f}".rstrip("0").rstrip(".") or "0" for role in HTTP_ROLES),
        f"{sum(c.status >= 400 for c in calls)}/{len(calls)}",
        _pair(figures.first_token),
        _pair(prefill),
        _pair([c.completion_tokens for c in answers], 0),
        _pair(decode),
        _pair(server),
    ]
    return [*rows, *zip(_MODEL_LABELS, values, strict=True)]


_MODEL_LABELS = (
    "HTTP calls/question rw·vote·assess·sum·ans·other",
    "HTTP calls with status >= 400",
    "first answer token p50 / p95 (s)",
    "answer call prefill p50 / p95 (s)",
    "answer tokens p50 / p95",
    "decode tokens/s p50 / p95 (wall)",
    "decode tokens/s p50 / p95 (server)",
)


def render(columns: Sequence[tuple[str, list[QuestionResult], ModelFigures | None]]) -> str:
    """One table: the kb eval rows, then the live-model rows; one column per engine."""
    groups = [summarise(name, results) for name, results, _ in columns]
    rows = [
        [label, *(cell(g, key) for g in groups)] for key, label in ROWS if key not in ("routes", "sources")
    ]
    extras = [extra_rows(results, figures) for _, results, figures in columns]
    for index, (label, _) in enumerate(extras[0]):
        rows.append([label, *(column[index][1] for column in extras)])
    header = ["", *(name for name, _, _ in columns)]
    widths = [max(_width(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = ["  ".join(_pad(text, widths[i]) for i, text in enumerate(header)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(_pad(text, widths[i]) for i, text in enumerate(row)).rstrip() for row in rows]
    return "\n".join(lines)


def first_of_each_type(questions: Sequence[EvalQuestion], count: int) -> list[EvalQuestion]:
    """The first `count` questions of every type, in file order."""
    kept: list[EvalQuestion] = []
    seen: Counter[str] = Counter()
    for question in questions:
        seen[question.type] += 1
        if seen[question.type] <= count:
            kept.append(question)
    return kept


async def bench(args: argparse.Namespace, base_url: str, model: str) -> str:
    text = QUESTIONS.read_text(encoding="utf-8")
    questions = parse_lines(text.splitlines()).questions
    questions = [q for q in questions if not args.type or q.type in args.type]
    if args.per_type:
        questions = first_of_each_type(questions, args.per_type)
    questions = questions[: args.limit or None]
    common: dict[str, Any] = {"storage": {"home": args.home}, "search": {"datasets": [DATASET]}}
    extractive = Settings(model={"name": "extractive"}, **common)
    results_x, _ = await run_engine(extractive, questions, label="extractive")
    async with RecordingProxy(base_url) as proxy:
        endpoint = {"base_url": proxy.base_url, "api_key": "local", "chat": model}
        live = Settings(model={**endpoint, **({"timeout": args.timeout} if args.timeout else {})}, **common)
        results_m, timed = await run_engine(live, questions, label="model")
    starts = scored_starts(timed.started, questions)
    figures = model_figures(proxy, starts, [t for _, t in timed.started])
    title = (
        f"bench_real_model · {len(questions)} questions of {QUESTIONS.name} · dataset {DATASET} · "
        f"model {model} at {base_url}"
    )
    table = render([("extractive", results_x, None), (f"model {model}", results_m, figures)])
    if args.json_path:
        payload = {
            "title": title,
            "extractive": [r.to_dict() for r in results_x],
            "model": [r.to_dict() for r in results_m],
        }
        args.json_path.write_text(json.dumps(payload, ensure_ascii=False, indent=1), encoding="utf-8")
    return f"{title}\n{table}"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--base-url", default=os.environ.get("KB_BENCH_MODEL_URL") or os.environ.get("OPENAI_BASE_URL")
    )
    parser.add_argument(
        "--model", default=os.environ.get("KB_CHAT_MODEL"), help="default: the server's first model"
    )
    parser.add_argument("--limit", type=int, default=0, help="only the first N questions")
    parser.add_argument(
        "--type", action="append", default=[], help="only questions of this type (repeatable)"
    )
    parser.add_argument(
        "--home",
        type=Path,
        default=Path.home() / ".cache" / "kb-bench-laws",
        help="KB_HOME kept between runs",
    )
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument(
        "--per-type", type=int, default=0, help="only the first N questions of each type (before --limit)"
    )
    parser.add_argument(
        "--json", dest="json_path", type=Path, help="write both engines' per-question results"
    )
    parser.add_argument("--timeout", type=float, default=0.0, help="KB_MODEL_TIMEOUT (default: the bot's)")
    args = parser.parse_args()
    if not args.base_url:
        print(
            "bench_real_model: skipped: no model server configured (--base-url, KB_BENCH_MODEL_URL or OPENAI_BASE_URL)"
        )
        return 0
    listed = asyncio.run(server_answers(args.base_url))
    if listed is None:
        print(
            f"bench_real_model: skipped: no OpenAI-compatible server answers at {args.base_url} "
            "(start one: scripts/llama-server.sh MODEL.gguf)"
        )
        return 0
    if not args.corpus.is_dir():
        print(f"bench_real_model: skipped: no law corpus at {args.corpus}")
        return 0
    for name in [n for n in os.environ if n.startswith(("KB_", "OPENAI_"))]:
        del os.environ[name]
    ingest_laws(args.home, args.corpus)
    started = time.monotonic()
    print(asyncio.run(bench(args, args.base_url, args.model or listed)))
    print(f"({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
