"""The bot's Prometheus metrics (prometheus_client), on one registry that `kb serve` exposes at /metrics.

Questions are measured from the finished record (what the pipeline already keeps: route, engine, phase
timings, rounds, fallbacks, notice, failure code) and the time to the first answer text, by MeasuredPipeline;
model calls by role and status by MeasuredEngine; delivery state changes and the time to delivered by
MeasuredLedger; Slack's 429s by the Web API client's retry handler; synced documents and chunks by the
schedule's reports. Every metric is listed in README (Operations). The registry is this process's:
kb serve is one process (its ingest workers report through it).
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from core.record import PHASES, Record
from core.sources.models import SyncReport

REGISTRY = CollectorRegistry(auto_describe=True)
CONTENT_TYPE = CONTENT_TYPE_LATEST
_PHASE_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160)

QUESTIONS = Counter(
    "kb_questions",
    "Questions finished, by route, engine and outcome",
    ["route", "engine", "outcome"],
    registry=REGISTRY,
)
PHASE_SECONDS = Histogram(
    "kb_question_phase_seconds",
    "Seconds per phase of answering (context, rewrite, retrieval, generation, claims, total), to the first "
    "answer text (first_token) and from the reply's first state to delivered (delivery)",
    ["phase"],
    buckets=_PHASE_BUCKETS,
    registry=REGISTRY,
)
ROUNDS = Histogram(
    "kb_retrieval_rounds", "Retrieval rounds per question", buckets=(1, 2, 3, 4, 5, 6), registry=REGISTRY
)
MODEL_CALLS = Counter(
    "kb_model_calls",
    "Model role calls (rewrite, assess, summary, vote, answer) by status (ok, or the error's code)",
    ["role", "status"],
    registry=REGISTRY,
)
MODEL_FIRST_TOKEN = Histogram(
    "kb_model_first_token_seconds",
    "Seconds from an answer call to the model's first streamed text",
    buckets=_PHASE_BUCKETS,
    registry=REGISTRY,
)
FALLBACKS = Counter(
    "kb_fallbacks",
    "Roles answered by the offline extractive engine after the model failed",
    ["role"],
    registry=REGISTRY,
)
NOTICES = Counter(
    "kb_uncertainty_notices", "Answers that ended with an uncertainty notice", registry=REGISTRY
)
FAILURES = Counter(
    "kb_question_failures",
    "Questions that failed, by error code (store_unavailable, knowledge_base_unavailable, …)",
    ["code"],
    registry=REGISTRY,
)
DELIVERIES = Counter(
    "kb_deliveries",
    "Deliveries entering a state (pending, placeholder, delivered, failed)",
    ["state"],
    registry=REGISTRY,
)
SLACK_RATE_LIMITED = Counter(
    "kb_slack_rate_limited", "Slack Web API calls answered 429, by method", ["method"], registry=REGISTRY
)
SYNCED_DOCUMENTS = Counter(
    "kb_synced_documents",
    "Documents a scheduled source sync added, changed or removed",
    ["source", "change"],
    registry=REGISTRY,
)
SYNCED_CHUNKS = Counter(
    "kb_synced_chunks",
    "Chunks scheduled source syncs wrote (added) or deleted (removed)",
    ["source", "change"],
    registry=REGISTRY,
)
SYNC_FAILURES = Counter(
    "kb_sync_failures", "Scheduled source syncs that failed", ["source"], registry=REGISTRY
)


def observe_answered(record: Record) -> None:
    """An answered record: its route, engine, phases, rounds, fallbacks and notice."""
    details = record.details
    trace = details.trace
    route = trace.mode if trace is not None else "none"
    engine = details.engine or "none"
    QUESTIONS.labels(route=route, engine=engine, outcome="answered").inc()
    timings = details.timings
    if timings is not None:
        for phase in PHASES:
            seconds = timings.seconds(phase)
            if seconds is not None:
                PHASE_SECONDS.labels(phase=phase).observe(seconds)
    if trace is not None and trace.rounds:
        ROUNDS.observe(len(trace.rounds))
    for role, error, fallback in (
        ("rewrite", details.rewrite_error, details.rewrite_engine),
        ("answer", details.answer_error, engine if engine.startswith("extractive") else ""),
    ):
        if error and fallback:
            FALLBACKS.labels(role=role).inc()
    if details.notice:
        NOTICES.inc()


def observe_failed(code: str, record: Record | None) -> None:
    """A question that failed (with its record when one was stored)."""
    FAILURES.labels(code=code or "error").inc()
    if record is not None:
        trace = record.details.trace
        route = trace.mode if trace is not None else "none"
        QUESTIONS.labels(route=route, engine=record.details.engine or "none", outcome="failed").inc()


def observe_sync(report: SyncReport) -> None:
    """One scheduled sync's outcome."""
    if not report.ok:
        SYNC_FAILURES.labels(source=report.source).inc()
        return
    for change, count in (("added", report.added), ("changed", report.changed), ("removed", report.removed)):
        if count:
            SYNCED_DOCUMENTS.labels(source=report.source, change=change).inc(count)
    for change, count in (("added", report.chunks_added), ("removed", report.chunks_removed)):
        if count:
            SYNCED_CHUNKS.labels(source=report.source, change=change).inc(count)


def exposition() -> bytes:
    """The registry in Prometheus' text format."""
    return generate_latest(REGISTRY)
