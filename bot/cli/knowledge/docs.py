"""`kb docs list|disable|enable|delete`: manage the documents of a dataset."""

from __future__ import annotations

import argparse
import datetime as dt
import json
from collections.abc import Sequence
from typing import Any

from adapters.knowledge.factory import open_knowledge_base
from bot.cli.conversation.selection import check_datasets
from bot.cli.knowledge.search import fit
from bot.cli.knowledge.writing import add_no_wait, held_for_writing
from bot.cli.texts import phrase
from bot.settings import Settings
from core.errors import InvalidInput, NotFound
from core.models import DocumentInfo

_MIN_PREFIX = 6


def register(commands: Any) -> None:
    """Add `kb docs` and its actions."""
    docs = commands.add_parser("docs", help="list, disable, enable or delete documents of a dataset")
    actions = docs.add_subparsers(dest="docs_action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="the documents of a dataset")
    listing.add_argument("--dataset", required=True, help="the dataset whose documents to list")
    listing.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(handler=run_docs)
    for name, text in (
        ("disable", "hide a document from every search"),
        ("enable", "show a disabled document again"),
        ("delete", "delete a document and its chunks"),
    ):
        action = actions.add_parser(name, help=text)
        action.add_argument("document", metavar="DOC", help="document name or id (or an id prefix)")
        action.add_argument("--dataset", required=True, help="the dataset the document is in")
        add_no_wait(action)
        action.set_defaults(handler=run_docs)


def resolve_document(documents: Sequence[DocumentInfo], wanted: str) -> DocumentInfo:
    """The document named or identified by wanted: exact id, exact name, then a unique id prefix."""
    key = wanted.strip()
    for doc in documents:
        if doc.document_id == key:
            return doc
    named = [doc for doc in documents if doc.name == key]
    if len(named) == 1:
        return named[0]
    if len(named) > 1:
        ids = ", ".join(doc.document_id for doc in named)
        raise InvalidInput(phrase("error.ambiguous_document", key=key, ids=ids))
    prefixed = [doc for doc in documents if len(key) >= _MIN_PREFIX and doc.document_id.startswith(key)]
    if len(prefixed) == 1:
        return prefixed[0]
    raise NotFound(phrase("error.no_such_document", key=key))


def format_documents(documents: Sequence[DocumentInfo]) -> str:
    """One line per document: id, state, chunks, updated, name, source (its link, for a synced one)."""
    lines = [f"{'id':<24}  {'state':<8} {'chunks':>6}  {'updated':<16}  {fit('name', 32)} source"]
    for doc in documents:
        updated = (
            dt.datetime.fromtimestamp(doc.updated_at).strftime("%Y-%m-%d %H:%M") if doc.updated_at else "-"
        )
        state = "enabled" if doc.enabled else "DISABLED"
        lines.append(
            f"{doc.document_id:<24}  {state:<8} {doc.chunk_count:>6}  {updated:<16}  {fit(doc.name, 32)} {doc.link or doc.source}"
        )
    return "\n".join(lines)


def _document_json(doc: DocumentInfo) -> dict[str, Any]:
    return {
        "id": doc.document_id,
        "name": doc.name,
        "source": doc.source,
        "link": doc.link,
        "enabled": doc.enabled,
        "chunks": doc.chunk_count,
        "hash": doc.content_hash,
        "updated": doc.updated_at,
    }


async def run_docs(args: argparse.Namespace, settings: Settings) -> int:
    """Run one docs action; NotFound (exit 2) for an unknown dataset or document. delete, disable and
    enable hold the dataset's writer lock (bot.cli.knowledge.writing); list never waits."""
    dataset = args.dataset.strip()
    if args.docs_action == "list":
        return await _run_docs(args, settings, dataset)
    async with held_for_writing(args, settings, dataset):
        return await _run_docs(args, settings, dataset)


async def _run_docs(args: argparse.Namespace, settings: Settings, dataset: str) -> int:
    async with open_knowledge_base(settings) as kb:
        if await kb.dataset_model(dataset) is None:
            await check_datasets(kb, [dataset])
        documents = await kb.list_documents(dataset)
        if args.docs_action == "list":
            if args.json:
                print(json.dumps([_document_json(d) for d in documents], ensure_ascii=False, indent=2))
            else:
                print(format_documents(documents))
                print(f"{len(documents)} documents, {sum(d.chunk_count for d in documents)} chunks")
            return 0
        doc = resolve_document(documents, args.document)
        if args.docs_action == "delete":
            removed = await kb.delete_document(dataset, doc.document_id)
            print(f"deleted {doc.name} ({doc.document_id}): {removed} chunks removed")
        else:
            enabled = args.docs_action == "enable"
            await kb.set_enabled(dataset, doc.document_id, enabled)
            print(f"{'enabled' if enabled else 'disabled'} {doc.name} ({doc.document_id})")
    return 0
