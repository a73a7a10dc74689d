"""The groups of settings, one TOML table each; every field names its environment variable and its bounds.

A field reads `name: type = Field(default=default, validation_alias="ENV_NAME", ge=low, le=high)`: the alias is the
variable's name as documented in README (it never changes with the grouping), the bounds are what a bad
value clamps to (bot.settings.bad_values).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator

from adapters.slack.reply.streaming_support import StreamingMode
from bot.settings.bad_values import SettingsGroup
from core.models import ClaimPolicy, RetrievalMode, SearchMode

OFFLINE_EMBEDDING_MODEL = "use-multilingual-v3"
EXTRACTIVE_MODEL = "extractive"


class StorageSettings(SettingsGroup):
    """Where the data lives: the data directory, the conversation database, an optional Chroma server."""

    home: Path = Field(default_factory=lambda: Path.home() / ".kb", validation_alias="KB_HOME")
    database_url: str | None = Field(default=None, validation_alias="KB_DATABASE_URL")
    chroma_url: str | None = Field(default=None, validation_alias="KB_CHROMA_URL")

    @property
    def effective_database_url(self) -> str:
        """KB_DATABASE_URL, or a SQLite file under KB_HOME."""
        return self.database_url or f"sqlite:///{self.home / 'conversations.sqlite3'}"

    @property
    def chroma_path(self) -> Path:
        """The embedded Chroma's folder under KB_HOME."""
        return self.home / "chroma"


class ModelSettings(SettingsGroup):
    """The OpenAI-compatible endpoint, the models of the roles, and how long a call may take."""

    base_url: str | None = Field(default=None, validation_alias="OPENAI_BASE_URL")
    api_key: str | None = Field(default=None, validation_alias="OPENAI_API_KEY")
    # the model of both roles; "extractive" forces the extractive engine
    name: str | None = Field(default=None, validation_alias="KB_MODEL")
    chat: str | None = Field(default=None, validation_alias="KB_CHAT_MODEL")
    aux: str | None = Field(default=None, validation_alias="KB_AUX_MODEL")
    # the longest silence between two streamed chunks
    timeout: float = Field(default=60.0, validation_alias="KB_MODEL_TIMEOUT", ge=1.0, le=600.0)
    # per attempt, prompt processing included
    first_token_timeout: float = Field(
        default=90.0, validation_alias="KB_MODEL_FIRST_TOKEN_TIMEOUT", ge=1.0, le=1800.0
    )
    # an auxiliary role's whole call, all retries included
    deadline: float = Field(default=45.0, validation_alias="KB_MODEL_DEADLINE", ge=1.0, le=3600.0)
    # the server's context window when it reports none (0: unknown)
    context_tokens: int = Field(default=0, validation_alias="KB_MODEL_CONTEXT_TOKENS", ge=0, le=10_000_000)
    retries: int = Field(default=3, validation_alias="KB_MODEL_RETRIES", ge=0, le=10)

    @property
    def forced_extractive(self) -> bool:
        """KB_MODEL=extractive."""
        return (self.name or "").strip().lower() == EXTRACTIVE_MODEL

    @property
    def chat_model(self) -> str:
        """The answering model: KB_CHAT_MODEL, else KB_MODEL (unless it is `extractive`), else ""."""
        return self.chat or (self.name if not self.forced_extractive else None) or ""

    @property
    def aux_model(self) -> str:
        """KB_AUX_MODEL, defaulting to the chat model."""
        return self.aux or self.chat_model

    @property
    def uses_extractive_engine(self) -> bool:
        """True when no model endpoint is configured, or KB_MODEL=extractive."""
        return self.extractive_reason is not None

    @property
    def extractive_reason(self) -> str | None:
        """Why answers will be extractive, naming the missing setting; None when a model answers."""
        if self.forced_extractive:
            return "KB_MODEL=extractive"
        if not (self.base_url or self.api_key):
            return "no model endpoint is configured (OPENAI_BASE_URL)"
        if not self.chat_model:
            given = "OPENAI_BASE_URL" if self.base_url else "OPENAI_API_KEY"
            return f"{given} is set but no model is named (set KB_CHAT_MODEL)"
        return None


class AnswerSettings(SettingsGroup):
    """The answer: its length, how long its first text may take, and what happens when the model fails."""

    max_tokens: int = Field(default=1500, validation_alias="KB_ANSWER_MAX_TOKENS", ge=64, le=16000)
    # the answer's first text, all retries included
    deadline: float = Field(default=120.0, validation_alias="KB_ANSWER_DEADLINE", ge=1.0, le=3600.0)
    fallback: bool = Field(default=True, validation_alias="KB_ANSWER_FALLBACK")
    # numbers and names the answer states that no source holds: listed under it, their sentences dropped,
    # or only the uncertainty notice (core/answering/claims.py)
    unsupported_claims: ClaimPolicy = Field(default="mark", validation_alias="KB_UNSUPPORTED_CLAIMS")


class EmbeddingSettings(SettingsGroup):
    """The embedding model of new datasets and its endpoint."""

    model: str = Field(default=OFFLINE_EMBEDDING_MODEL, validation_alias="KB_EMBEDDING_MODEL")
    base_url: str | None = Field(default=None, validation_alias="KB_EMBEDDING_BASE_URL")
    # BLAS threads the offline model embeds an ingest's documents with (0: all cores but one; kb serve's
    # queries always use one)
    threads: int = Field(default=0, validation_alias="KB_EMBED_THREADS", ge=0, le=256)

    @property
    def document_threads(self) -> int:
        """KB_EMBED_THREADS, with 0 read as all cores but one (at least one)."""
        return self.threads or max(1, (os.cpu_count() or 1) - 1)


class AgentSettings(SettingsGroup):
    """Retrieval: single search or the multi-hop loop, and the loop's budgets."""

    retrieval_mode: RetrievalMode = Field(default="auto", validation_alias="KB_RETRIEVAL_MODE")
    max_rounds: int = Field(default=3, validation_alias="KB_AGENT_MAX_ROUNDS", ge=1, le=6)
    evidence_tokens: int = Field(
        default=16000, validation_alias="KB_AGENT_EVIDENCE_TOKENS", ge=1000, le=24000
    )
    max_paragraphs: int = Field(default=40, validation_alias="KB_AGENT_MAX_PARAGRAPHS", ge=1, le=100)
    queries_per_round: int = Field(default=2, validation_alias="KB_AGENT_QUERIES_PER_ROUND", ge=1, le=4)
    candidates_per_round: int = Field(
        default=8, validation_alias="KB_AGENT_CANDIDATES_PER_ROUND", ge=1, le=50
    )
    first_search_depth: int = Field(default=10, validation_alias="KB_FIRST_SEARCH_DEPTH", ge=1, le=50)
    # the extractive assessor: share of a part's terms that must be found
    coverage_threshold: float = Field(default=0.6, validation_alias="KB_COVERAGE_THRESHOLD", ge=0.0, le=1.0)


class SearchSettings(SettingsGroup):
    """One search: its mode, the default datasets, and the query-length tiers."""

    mode: SearchMode = Field(default="blend", validation_alias="KB_SEARCH_MODE")
    datasets: list[str] = Field(default_factory=list, validation_alias="KB_DATASETS")
    short_query_length: int = Field(default=4, validation_alias="KB_SHORT_QUERY_LENGTH", ge=1, le=64)
    topk_short: int = Field(default=20, validation_alias="KB_TOPK_SHORT", ge=1, le=50)
    topk_medium: int = Field(default=12, validation_alias="KB_TOPK_MEDIUM", ge=1, le=50)
    topk_long: int = Field(default=8, validation_alias="KB_TOPK_LONG", ge=1, le=50)
    min_score_short: float = Field(default=0.25, validation_alias="KB_MIN_SCORE_SHORT", ge=0.0, le=1.0)
    min_score_default: float = Field(default=0.28, validation_alias="KB_MIN_SCORE_DEFAULT", ge=0.0, le=1.0)

    @field_validator("datasets", mode="before")
    @classmethod
    def _comma_separated(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value


class ContextSettings(SettingsGroup):
    """What of a conversation goes into a turn: the question's size limit and the bounded history."""

    question_max_tokens: int = Field(default=4000, validation_alias="KB_QUESTION_MAX_TOKENS", ge=16, le=32000)
    dialogue_number: int = Field(default=5, validation_alias="KB_DIALOGUE_NUMBER", ge=0, le=20)
    recent_tokens: int = Field(default=6000, validation_alias="KB_CONTEXT_RECENT_TOKENS", ge=512, le=16000)


class IngestSettings(SettingsGroup):
    """Ingestion: chunk size and the limits that refuse oversized files and zip bombs."""

    chunk_tokens: int = Field(default=400, validation_alias="KB_CHUNK_TOKENS", ge=64, le=4000)
    # a bigger file (or archive member) is refused with its size
    max_file_mb: int = Field(default=200, validation_alias="KB_MAX_FILE_MB", ge=1, le=10_000)
    # a zip (or .docx/.xlsx/.pptx) unpacking to more is refused
    max_archive_mb: int = Field(default=1024, validation_alias="KB_MAX_ARCHIVE_MB", ge=1, le=100_000)


class ClassifierSettings(SettingsGroup):
    """The optional multi-hop classifier service."""

    url: str | None = Field(default=None, validation_alias="KB_CLASSIFIER_URL")
    timeout: float = Field(default=2.0, validation_alias="KB_CLASSIFIER_TIMEOUT", ge=0.1, le=60.0)
    # a failed classifier is skipped this long
    retry_after: float = Field(default=30.0, validation_alias="KB_CLASSIFIER_RETRY_AFTER", ge=0.0, le=3600.0)


class RerankSettings(SettingsGroup):
    """The optional HTTP rerank API."""

    url: str | None = Field(default=None, validation_alias="KB_RERANK_URL")
    model: str | None = Field(default=None, validation_alias="KB_RERANK_MODEL")
    api_key: str | None = Field(default=None, validation_alias="KB_RERANK_API_KEY")


class LogSettings(SettingsGroup):
    """[logs]: how the log lines look (read once at start)."""

    # text (readable, the default) or json (one object per line, for a log collector)
    format: Literal["text", "json"] = Field(default="text", validation_alias="KB_LOG_FORMAT")
    # JSON lines carry the logged values (which may quote questions or documents) only when true
    content: bool = Field(default=False, validation_alias="KB_LOG_CONTENT")


class SlackSettings(SettingsGroup):
    """The Slack app's credentials and the bot's behaviour there."""

    bot_token: str | None = Field(default=None, validation_alias="SLACK_BOT_TOKEN")
    app_token: str | None = Field(default=None, validation_alias="SLACK_APP_TOKEN")
    signing_secret: str | None = Field(default=None, validation_alias="SLACK_SIGNING_SECRET")
    api_url: str | None = Field(default=None, validation_alias="SLACK_API_URL")
    # how answers show up while they are written
    streaming: StreamingMode = Field(default="auto", validation_alias="KB_SLACK_STREAMING")
    # answer questions interrupted by a stopped instance again, once (false: "please ask again")
    resume_interrupted: bool = Field(default=True, validation_alias="KB_RESUME_INTERRUPTED")
    # Socket Mode: serve GET /metrics on this port (0: not at all; HTTP mode serves it beside /slack/events)
    metrics_port: int = Field(default=0, validation_alias="KB_METRICS_PORT", ge=0, le=65535)
    # seconds a pending question's lock must stay free before it is swept
    pending_grace: float = Field(default=60.0, validation_alias="KB_PENDING_GRACE", ge=5.0, le=3600.0)
