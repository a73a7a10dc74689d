"""The doctor's checks of what lives on this machine or its databases: settings, conversation store, Chroma.

The store check opens the store the way `kb serve` does, which applies pending migrations; it reports the
schema version it finds and what was applied. The knowledge checks reuse `kb datasets list` and, per
dataset, the quick form of `kb datasets check` (adapters.knowledge.chroma.health.quick_check: counts and the
keyword index's saved signature, not ids), so a million-chunk dataset is checked as fast as a small one.
"""

from __future__ import annotations

import logging
import shlex
from collections.abc import Iterator
from contextlib import contextmanager

from adapters.knowledge.chroma.health import DatasetSummary
from adapters.knowledge.chroma.kb import ChromaKnowledgeBase
from adapters.knowledge.factory import open_knowledge_base
from adapters.store.backends import open_store
from adapters.store.schema import MIGRATIONS
from bot.doctor.report import Check
from bot.settings import Settings
from core.errors import KbError


class _Collected(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@contextmanager
def _settings_warnings() -> Iterator[list[str]]:
    """The warnings bot.settings logs meanwhile (a bad value replaced, an unknown key, an unreadable file)."""
    logger = logging.getLogger("bot.settings")
    handler, propagates = _Collected(), logger.propagate
    logger.addHandler(handler)
    logger.propagate = False  # shown once, as a check, not again as a log line
    try:
        yield handler.lines
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagates


def check_settings() -> tuple[Check, Settings]:
    """Settings read again from the environment and KB_CONFIG: every value used as given."""
    with _settings_warnings() as warnings:
        settings = Settings()
    if warnings:
        shown = "; ".join(dict.fromkeys(warnings))
        fix = "correct these in the environment or the KB_CONFIG file (each was replaced as stated)"
        return Check.failed("settings", shown, fix), settings
    return Check.ok("settings", "every value parsed and in range"), settings


def _reason(error: BaseException) -> str:
    return error.message("en") if isinstance(error, KbError) else f"{type(error).__name__}: {error}"


async def check_store(settings: Settings) -> Check:
    """The conversation store opens and its schema is this program's (pending migrations are applied)."""
    url = settings.storage.effective_database_url
    shown = url.split("@", 1)[-1] if "://" in url else url  # never a password
    try:
        store = await open_store(url)
    except Exception as error:
        fix = "check KB_DATABASE_URL (or KB_HOME) and that the database server is running"
        return Check.failed("conversation store", f"{shown}: {_reason(error)}", fix)
    try:
        rows = await store.database.fetch("SELECT max(version) AS version FROM schema_version")
    finally:
        await store.close()
    version = int(rows[0]["version"] or 0) if rows else 0
    if version != len(MIGRATIONS):
        fix = "run `kb serve` once with this version so the migrations are applied"
        return Check.failed(
            "conversation store", f"{shown}: schema version {version} of {len(MIGRATIONS)}", fix
        )
    return Check.ok("conversation store", f"{shown}: opens, schema version {version} (current)")


async def check_knowledge(settings: Settings) -> list[Check]:
    """Chroma answers; every dataset was built with the configured embedder and its parts agree."""
    where = settings.storage.chroma_url or str(settings.storage.home / "chroma")
    checks: list[Check] = []
    try:
        async with open_knowledge_base(settings) as kb:
            summaries = await kb.dataset_summaries()
            checks.append(Check.ok("chroma", f"{where}: answers, {len(summaries)} dataset(s)"))
            for summary in summaries:
                checks.append(await _dataset_check(kb, summary, settings.embedding.model))
    except Exception as error:
        fix = "check KB_CHROMA_URL and that the Chroma server is running (or KB_HOME for embedded Chroma)"
        return [*checks, Check.failed("chroma", f"{where}: {_reason(error)}", fix)]
    return checks


async def _dataset_check(kb: ChromaKnowledgeBase, summary: DatasetSummary, configured: str) -> Check:
    name, model = summary.name, summary.model
    label, quoted = f"dataset {name}", shlex.quote(name)
    if summary.problem:
        fix = f"`kb datasets check {quoted}`, then `kb datasets rebuild {quoted}`"
        return Check.failed(label, summary.problem, fix)
    if model and model != configured:
        fix = f"set KB_EMBEDDING_MODEL={model} (a dataset is always queried with the model it was built with)"
        return Check.failed(label, f"built with {model}, KB_EMBEDDING_MODEL is {configured}", fix)
    report = await kb.quick_check_dataset(name)  # counts and signatures: as quick at 1M chunks as at 1k
    if not report.ok:
        fix = f"`kb datasets check {quoted}` names what differs; `kb datasets rebuild {quoted}` repairs it"
        return Check.failed(label, "; ".join(report.problems), fix)
    keywords = "no keyword index saved yet" if report.keyword_chunks is None else "keyword index agrees"
    notes = "".join(f"; {note}" for note in report.notes)
    return Check.ok(
        label, f"{report.documents} documents, {report.live_chunks} chunks, {model}; {keywords}{notes}"
    )
