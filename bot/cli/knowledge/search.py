"""`kb search`: the hit test (docs/design.md#the-hit-test) — a readable table of hits, or JSON for scripts."""

from __future__ import annotations

import argparse
import asyncio
import json
import unicodedata
from collections.abc import Sequence
from typing import Any

from adapters.knowledge.factory import open_knowledge_base
from bot.cli.conversation.selection import check_datasets
from bot.cli.knowledge.snippet import best_sentence
from bot.cli.outcome import current_state
from bot.cli.texts import phrase
from bot.settings import Settings
from core.errors import NotFound
from core.knowledge.search import SearchTiers, build_search_request, parse_mode, tier_for
from core.models import SEARCH_MODES, Hit, SearchMode, SearchRequest


def register(commands: Any) -> None:
    """Add `kb search`."""
    search = commands.add_parser("search", help="search datasets (embedding, keywords or blend)")
    search.add_argument("query", help="what to search for")
    search.add_argument(
        "--dataset", action="append", default=[], help="dataset to search (repeatable; default: KB_DATASETS)"
    )
    search.add_argument("--mode", help=f"one of {', '.join(SEARCH_MODES)} (default: KB_SEARCH_MODE)")
    search.add_argument("--threshold", type=float, help="minimum score (default: by query length)")
    search.add_argument("--top", type=int, help="number of hits, 1..50 (default: by query length)")
    search.add_argument("--json", action="store_true", help="print JSON")
    search.set_defaults(handler=run_search)


def tiers_from(settings: Settings) -> SearchTiers:
    """The query-length tiers configured in settings (docs/design.md#query-length-tiers)."""
    return SearchTiers(
        short_length=settings.search.short_query_length,
        topk_short=settings.search.topk_short,
        topk_medium=settings.search.topk_medium,
        topk_long=settings.search.topk_long,
        min_score_short=settings.search.min_score_short,
        min_score_default=settings.search.min_score_default,
    )


def search_request(args: argparse.Namespace, settings: Settings) -> SearchRequest:
    """The validated request: --top/--threshold when given, else the query-length tier's values."""
    default_mode: SearchMode = parse_mode(settings.search.mode)
    datasets = args.dataset or settings.search.datasets
    request = build_search_request(args.query, datasets, mode=args.mode, default_mode=default_mode)
    tier_limit, tier_threshold = tier_for(request.query, tiers_from(settings))
    return build_search_request(
        request.query,
        request.datasets,
        mode=request.mode,
        limit=args.top if args.top is not None else tier_limit,
        threshold=args.threshold if args.threshold is not None else tier_threshold,
    )


def _width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def fit(text: str, width: int) -> str:
    """text on one line, cut with … and padded to exactly `width` display columns (CJK count 2)."""
    flat = " ".join(text.split())
    if _width(flat) > width:
        out, used = [], 0
        for ch in flat:
            w = _width(ch)
            if used + w > width - 1:
                break
            out.append(ch)
            used += w
        flat = "".join(out) + "…"
    return flat + " " * (width - _width(flat))


DOCUMENT_WIDTH = (8, 48)  # the document column grows with the names shown, within these bounds


def fit_middle(text: str, width: int) -> str:
    """text padded to `width` columns; a longer one keeps its start and its end (a version date) around …"""
    flat = " ".join(text.split())
    if _width(flat) <= width:
        return flat + " " * (width - _width(flat))
    tail: list[str] = []
    used = 0
    for ch in reversed(flat):  # about half the room for the end, where names carry dates and versions
        if used + _width(ch) > (width - 1) // 2:
            break
        tail.append(ch)
        used += _width(ch)
    end = "".join(reversed(tail))
    head: list[str] = []
    room = width - 1 - used
    for ch in flat:
        if _width(ch) > room:
            break
        head.append(ch)
        room -= _width(ch)
    return "".join(head) + "…" + end + " " * room


def format_table(hits: Sequence[Hit], *, show_dataset: bool = False, query: str = "") -> str:
    """Rank, score, document (dataset/document when several datasets), where (page, slide, rows; only
    when a hit has one), heading and snippet (from the sentence best matching query) per line.

    The document column is as wide as the longest name (within DOCUMENT_WIDTH); a name still too long
    keeps its end, so a version date such as (2012-12-28) stays visible.
    """
    documents = [f"{hit.dataset}/{hit.document_name}" if show_dataset else hit.document_name for hit in hits]
    low, high = DOCUMENT_WIDTH
    width = max(low, min(high, max((_width(name) for name in documents), default=low)))
    where = any(hit.location for hit in hits)
    header = f"{'#':>3}  {'score':<6} {fit('document', width)} "
    header += f"{fit('where', 14)} " if where else ""
    lines = [header + f"{fit('heading', 30)} snippet"]
    for rank, (hit, document) in enumerate(zip(hits, documents, strict=True), start=1):
        heading = hit.heading.split(" > ", 1)[-1] if " > " in hit.heading else hit.heading
        line = f"{rank:>3}  {hit.score:<6.3f} {fit_middle(document, width)} "
        line += f"{fit(hit.location.label(), 14)} " if where else ""
        snippet = " ".join(best_sentence(hit.content, query).split())
        lines.append(line + f"{fit(heading, 30)} {fit(snippet, 60).rstrip()}")
    return "\n".join(lines)


def hits_json(request: SearchRequest, hits: Sequence[Hit]) -> str:
    """The request and its hits as JSON."""
    return json.dumps(
        {
            "query": request.query,
            "mode": request.mode,
            "datasets": list(request.datasets),
            "limit": request.limit,
            "threshold": request.threshold,
            "hits": [
                {
                    "rank": rank,
                    "id": hit.id,
                    "score": round(hit.score, 6),
                    "dataset": hit.dataset,
                    "document_id": hit.document_id,
                    "document": hit.document_name,
                    "title": hit.title,
                    "heading": hit.heading,
                    "source": hit.source,
                    "position": hit.position,
                    **hit.location.to_dict(),
                    "content": hit.content,
                }
                for rank, hit in enumerate(hits, start=1)
            ],
        },
        ensure_ascii=False,
        indent=2,
    )


async def run_search(args: argparse.Namespace, settings: Settings) -> int:
    """Search and print; NotFound / InvalidInput (exit 2) on bad input or an unknown dataset."""
    current_state().use_language_of(args.query or "")
    request = search_request(args, settings)
    async with open_knowledge_base(settings) as kb:
        if not request.datasets:
            known = await kb.list_datasets()
            raise NotFound(phrase("error.name_a_dataset", known=", ".join(known) or "-"))
        await check_datasets(kb, request.datasets)
        hits = await kb.search(request)
    if args.json:
        print(hits_json(request, hits))
    elif hits:
        table = await asyncio.to_thread(
            format_table, hits, show_dataset=len(request.datasets) > 1, query=request.query
        )  # jieba picks the snippets
        print(table)
    else:
        print(f"no hits (mode {request.mode}, threshold {request.threshold:.2f})")
    return 0
