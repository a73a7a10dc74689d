"""`kb eval`: run a question set through the real pipeline and print what users would get, per type."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from bot.cli.durations import parse_since
from bot.compose import build_services, search_policy
from bot.evaluation.from_feedback import feedback_questions
from bot.evaluation.html_report import render_html
from bot.evaluation.questions import parse_lines
from bot.evaluation.report import render_missing, render_table
from bot.evaluation.runner import EvalRunner, QuestionResult, RunOptions
from bot.evaluation.services import observed_services
from bot.evaluation.summary import summarise_all
from bot.settings import Settings
from core.knowledge.search import parse_mode
from core.models import RETRIEVAL_MODES, SEARCH_MODES


def register(commands: Any) -> None:
    """Add `kb eval`."""
    parser = commands.add_parser(
        "eval",
        help="run a question set (JSONL) through the pipeline and report gold found, citations and notices",
    )
    parser.add_argument(
        "questions", nargs="?", help="JSONL file: id, type, question, turns, gold, answer_keywords, ..."
    )
    parser.add_argument(
        "--dataset", action="append", default=[], help="dataset (repeatable; required unless --from-feedback)"
    )
    parser.add_argument(
        "--from-feedback",
        dest="feedback_path",
        metavar="FILE",
        help="instead of running: write the answers rated 👍/👎 (since --since, in --dataset) as a question file",
    )
    parser.add_argument("--since", default="90d", help="with --from-feedback: how far back (default 90d)")
    parser.add_argument("--mode", choices=SEARCH_MODES, help="search mode (default: KB_SEARCH_MODE)")
    parser.add_argument(
        "--retrieval-mode", choices=RETRIEVAL_MODES, help="force a route (default: KB_RETRIEVAL_MODE)"
    )
    parser.add_argument(
        "--type", action="append", default=[], help="only questions of this type (repeatable)"
    )
    parser.add_argument("--limit", type=int, help="only the first N questions")
    parser.add_argument("--json", dest="json_path", metavar="FILE", help="write per-question results as JSON")
    parser.add_argument("--html", dest="html_path", metavar="FILE", help="write a self-contained HTML report")
    parser.set_defaults(handler=run_eval)


def _write(path: str, text: str) -> None:
    Path(path).write_text(text, encoding="utf-8")


class _Progress:
    """A tqdm bar on a terminal; without one, a line at least every 10 seconds."""

    def __init__(self, total: int) -> None:
        from tqdm import tqdm

        interactive = sys.stderr.isatty()
        self._bar = tqdm(
            total=total,
            unit="q",
            file=sys.stderr,
            dynamic_ncols=interactive,
            mininterval=0.5 if interactive else 10.0,
            maxinterval=10.0,
            ascii=not interactive,
        )

    def __call__(self, result: QuestionResult) -> None:
        self._bar.update(1)

    def close(self) -> None:
        self._bar.close()


async def write_feedback_questions(args: argparse.Namespace, settings: Settings) -> int:
    """`kb eval --from-feedback FILE`: the rated answers as a question file; exit 0, or 2 when unwritable."""
    since = parse_since(args.since, time.time())
    async with build_services(settings) as services:
        rows = await feedback_questions(services.store, services.kb, since=since, datasets=args.dataset)
    text = "".join(json.dumps(row.to_json(), ensure_ascii=False) + "\n" for row in rows)
    try:
        await asyncio.to_thread(_write, args.feedback_path, text)
    except OSError as exc:
        print(f"error: cannot write {args.feedback_path}: {exc}", file=sys.stderr)
        return 2
    up = sum(row.type == "feedback_up" for row in rows)
    print(f"{len(rows)} rated answer(s) written to {args.feedback_path}: {up} 👍, {len(rows) - up} 👎")
    return 0


async def run_eval(args: argparse.Namespace, settings: Settings) -> int:
    """Exit 0 after printing the table; 2 on a missing file, no usable question or an unknown dataset."""
    if args.feedback_path:
        return await write_feedback_questions(args, settings)
    if not args.questions or not args.dataset:
        print("error: kb eval needs a question file and --dataset (or --from-feedback FILE)", file=sys.stderr)
        return 2
    path = Path(args.questions)
    try:
        text = await asyncio.to_thread(path.read_text, encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"error: cannot read {path}: {exc}", file=sys.stderr)
        return 2
    parsed = parse_lines(text.splitlines())
    for bad in parsed.bad_lines:
        print(f"{path}:{bad.line}: skipped: {bad.reason}", file=sys.stderr)
    questions = [q for q in parsed.questions if not args.type or q.type in args.type]
    questions = questions[: args.limit] if args.limit else questions
    if not questions:
        print(f"error: no usable question in {path}", file=sys.stderr)
        return 2
    async with observed_services(settings) as (services, observed_kb, counting_engine):
        known = set(await services.kb.list_datasets())
        unknown = [name for name in args.dataset if name not in known]
        if unknown:
            listing = ", ".join(sorted(known)) or "(none — ingest one with `kb ingest PATH --dataset NAME`)"
            print(f"error: unknown dataset {', '.join(unknown)}; existing: {listing}", file=sys.stderr)
            return 2
        mode = parse_mode(args.mode or settings.search.mode)
        retrieval = args.retrieval_mode or None
        options = RunOptions(
            datasets=tuple(dict.fromkeys(args.dataset)),
            search_mode=mode,
            retrieval_mode=retrieval,
            tiers=search_policy(settings).tiers,
        )
        header = (
            f"kb eval · {len(questions)} questions from {path.name} · dataset {', '.join(options.datasets)} · "
            f"search {mode} · retrieval {retrieval or settings.agent.retrieval_mode} · engine {services.engine.name}"
        )
        print(header, file=sys.stderr)
        runner = EvalRunner(services.pipeline, observed_kb, counting_engine, options)
        progress = _Progress(len(questions))
        try:
            results = await runner.run(questions, progress=progress)
        finally:
            progress.close()
    groups = summarise_all(results)
    print(header)
    print(render_table(groups))
    missing = render_missing(results)
    if missing:
        print()
        print(missing)
    if args.json_path:
        payload = {
            "header": header,
            "summary": [group.to_dict() for group in groups],
            "questions": [result.to_dict() for result in results],
        }
        await asyncio.to_thread(_write, args.json_path, json.dumps(payload, ensure_ascii=False, indent=1))
    if args.html_path:
        page = render_html(f"kb eval · {path.name}", header, groups, results)
        await asyncio.to_thread(_write, args.html_path, page)
    return 0
