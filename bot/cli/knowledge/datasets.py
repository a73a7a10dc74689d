"""`kb datasets list|check|drop|rebuild`: what datasets there are, whether one is sound, delete or repair one.

`check` compares a dataset's catalog, its Chroma collection (records and vector index) and its keyword
index and exits 1 naming what disagrees; `rebuild` re-embeds the stored chunks into fresh collections
and swaps them in, without the source files (adapters.knowledge.chroma.rebuild); `drop` deletes the
dataset's index after a confirmation (--yes skips it). drop and rebuild hold the writer lock.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shlex
import sys
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from adapters.knowledge.chroma.health import DatasetCheck, DatasetSummary
from adapters.knowledge.factory import open_knowledge_base
from bot.cli.conversation.selection import check_datasets
from bot.cli.knowledge.search import fit
from bot.cli.knowledge.writing import add_no_wait, held_for_writing
from bot.cli.outcome import current_state
from bot.cli.texts import phrase
from bot.settings import Settings
from core.errors import KnowledgeBaseError

YES = frozenset({"y", "yes"})


def register(commands: Any) -> None:
    """Add `kb datasets` and its actions."""
    datasets = commands.add_parser("datasets", help="list, check, drop or rebuild datasets")
    actions = datasets.add_subparsers(dest="datasets_action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="every dataset: documents, chunks, embedder, last change")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(handler=run_list)
    check = actions.add_parser(
        "check", help="whether a dataset's catalog, collection and keyword index agree (exit 1 if not)"
    )
    check.add_argument("name", metavar="NAME", help="the dataset")
    check.set_defaults(handler=run_check)
    drop = actions.add_parser("drop", help="delete a dataset's index (asks first; the source files stay)")
    drop.add_argument("name", metavar="NAME", help="the dataset")
    drop.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    add_no_wait(drop)
    drop.set_defaults(handler=run_drop)
    rebuild = actions.add_parser(
        "rebuild", help="re-embed a dataset from its stored chunks into a fresh collection (no source files)"
    )
    rebuild.add_argument("name", metavar="NAME", help="the dataset")
    add_no_wait(rebuild)
    rebuild.set_defaults(handler=run_rebuild)


def _when(timestamp: float) -> str:
    return dt.datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M") if timestamp else "-"


def format_summaries(summaries: Sequence[DatasetSummary]) -> str:
    """One line per dataset: name, documents, chunks, embedder, last change (or what is wrong with it)."""
    width = max([len("name"), *(len(s.name) for s in summaries)])
    width = min(width, 40)
    lines = [f"{fit('name', width)}  {'documents':>9}  {'chunks':>7}  {fit('embedder', 24)}  last change"]
    for summary in summaries:
        if summary.problem:
            check = shlex.quote(summary.name)
            lines.append(
                f"{fit(summary.name, width)}  DAMAGED: {summary.problem} (kb datasets check {check})"
            )
            continue
        lines.append(
            f"{fit(summary.name, width)}  {summary.documents:>9}  {summary.chunks:>7}  "
            f"{fit(summary.model, 24)}  {_when(summary.updated)}"
        )
    return "\n".join(lines)


async def run_list(args: argparse.Namespace, settings: Settings) -> int:
    """Print every dataset (never waits for a writer)."""
    async with open_knowledge_base(settings) as kb:
        summaries = await kb.dataset_summaries()
    if args.json:
        print(json.dumps([asdict(summary) for summary in summaries], ensure_ascii=False, indent=2))
    elif summaries:
        print(format_summaries(summaries))
    else:
        print("no datasets yet: add documents with `kb ingest PATH --dataset NAME`")
    return 0


def format_check(report: DatasetCheck) -> str:
    """The counts of each part, then one line per problem and note."""
    keywords = (
        "-"
        if report.keyword_chunks is None
        else f"{report.keyword_chunks} of {report.live_chunks} live chunks"
    )
    lines = [
        f"dataset {report.name}",
        f"  catalog        {report.documents} documents, {report.live_chunks} live chunks",
        f"  collection     {report.stored_chunks} chunks stored",
        f"  vector index   {report.indexed_chunks} of {report.live_chunks} live chunks",
        f"  keyword index  {keywords}",
    ]
    lines += [f"problem: {problem}" for problem in report.problems]
    lines += [f"note: {note}" for note in report.notes]
    if report.ok:
        lines.append("ok: the catalog, the collection and the keyword index agree")
    return "\n".join(lines)


async def run_check(args: argparse.Namespace, settings: Settings) -> int:
    """Check one dataset (never waits for a writer); 1 and an error line naming the repair when it fails."""
    name = args.name.strip()
    async with open_knowledge_base(settings) as kb:
        await check_datasets(kb, [name])
        report = await kb.check_dataset(name)
    print(format_check(report))
    if report.ok:
        return 0
    count = len(report.problems)
    quoted = shlex.quote(name)
    print(
        f"error: dataset {name} has {count} problem{'s' if count > 1 else ''}; "
        f"`kb datasets rebuild {quoted}` re-embeds it from its stored chunks "
        f"(or `kb datasets drop {quoted}` and ingest its files again)",
        file=sys.stderr,
    )
    return 1


def _confirmed(summary: DatasetSummary) -> bool:
    """Ask on stderr, read one line from stdin: y or yes drops."""
    size = (
        "its catalog cannot be read"
        if summary.problem
        else f"{summary.documents} documents, {summary.chunks} chunks"
    )
    print(
        f"drop dataset {summary.name} ({size})? Its index is deleted; the source files are not touched. [y/N] ",
        end="",
        file=sys.stderr,
        flush=True,
    )
    answer = sys.stdin.readline()
    if not sys.stdin.isatty():
        print(file=sys.stderr)  # a piped answer is not echoed: end the question's line
    return answer.strip().lower() in YES


async def run_drop(args: argparse.Namespace, settings: Settings) -> int:
    """Drop a dataset after confirmation (--yes: without); 1 when not confirmed."""
    name = args.name.strip()
    async with held_for_writing(args, settings, name), open_knowledge_base(settings) as kb:
        await check_datasets(kb, [name])
        if not args.yes:
            summaries = {summary.name: summary for summary in await kb.dataset_summaries()}
            if not _confirmed(summaries.get(name, DatasetSummary(name, 0, 0, "", 0.0))):
                print(f"error: dataset {name} was not dropped (answer y, or pass --yes)", file=sys.stderr)
                return 1
        dropped = await kb.drop_dataset(name)
    print(f"dropped dataset {name} ({dropped.documents} documents, {dropped.chunks} chunks)")
    return 0


async def run_rebuild(args: argparse.Namespace, settings: Settings) -> int:
    """Rebuild a dataset from its stored chunks; warns about documents that had to be left out."""
    name = args.name.strip()
    interactive = sys.stderr.isatty()

    def on_progress(done: int, total: int) -> None:
        if interactive:
            print(f"\rrebuild: {done}/{total} chunks re-embedded", end="", file=sys.stderr, flush=True)

    async with held_for_writing(args, settings, name), open_knowledge_base(settings) as kb:
        await check_datasets(kb, [name])
        try:
            report = await kb.rebuild_dataset(name, on_progress=on_progress)
        except KnowledgeBaseError as error:
            reason = error.message(current_state().lang)
            raise KnowledgeBaseError(
                phrase("error.rebuild_failed", dataset=name, reason=reason, name=shlex.quote(name)),
                detail=str(error),
            ) from error
    if interactive:
        print(file=sys.stderr)
    for document in report.dropped:
        print(
            f"warning: left out {document}: some of its chunks are no longer stored; ingest it again",
            file=sys.stderr,
        )
    print(
        f"rebuilt dataset {name}: {report.documents} documents, {report.chunks} chunks re-embedded "
        f"with {report.model} in {report.seconds:.1f} s"
    )
    return 0
