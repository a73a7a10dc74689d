"""Typed settings from the environment and an optional TOML file (KB_CONFIG), validated once at start.

Out-of-range numbers clamp to their range; unparsable values fall back to the default with a logged
warning (docs/design.md#settings-parsing-and-ranges), so a typo never stops the bot.
"""

from __future__ import annotations

import logging
import os
import tomllib
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, NoDecode, PydanticBaseSettingsSource, SettingsConfigDict

from adapters.slack.inbound.channel_config import ChannelConfig
from adapters.slack.reply.streaming_support import STREAMING_MODES
from core.budget import float_setting, setting
from core.models import RETRIEVAL_MODES, SEARCH_MODES

log = logging.getLogger(__name__)

OFFLINE_EMBEDDING_MODEL = "use-multilingual-v3"
EXTRACTIVE_MODEL = "extractive"

# name: (default, low, high)
INT_RANGES: dict[str, tuple[int, int, int]] = {
    "kb_agent_max_rounds": (3, 1, 6),
    "kb_agent_evidence_tokens": (16000, 1000, 24000),
    "kb_agent_max_paragraphs": (40, 1, 100),
    "kb_agent_queries_per_round": (2, 1, 4),
    "kb_agent_candidates_per_round": (8, 1, 50),
    "kb_first_search_depth": (10, 1, 50),
    "kb_context_recent_tokens": (6000, 512, 16000),
    "kb_dialogue_number": (5, 0, 20),
    "kb_question_max_tokens": (4000, 16, 32000),
    "kb_answer_max_tokens": (1500, 64, 16000),
    "kb_short_query_length": (4, 1, 64),
    "kb_topk_short": (20, 1, 50),
    "kb_topk_medium": (12, 1, 50),
    "kb_topk_long": (8, 1, 50),
    "kb_chunk_tokens": (400, 64, 4000),
    "kb_max_file_mb": (200, 1, 10_000),
    "kb_max_archive_mb": (1024, 1, 100_000),
    "kb_model_retries": (3, 0, 10),
    "kb_model_context_tokens": (0, 0, 10_000_000),
}
FLOAT_RANGES: dict[str, tuple[float, float, float]] = {
    "kb_min_score_short": (0.25, 0.0, 1.0),
    "kb_min_score_default": (0.28, 0.0, 1.0),
    "kb_model_timeout": (60.0, 1.0, 600.0),
    "kb_model_first_token_timeout": (90.0, 1.0, 1800.0),
    "kb_model_deadline": (45.0, 1.0, 3600.0),
    "kb_answer_deadline": (120.0, 1.0, 3600.0),
    "kb_classifier_timeout": (2.0, 0.1, 60.0),
    "kb_classifier_retry_after": (30.0, 0.0, 3600.0),
    "kb_coverage_threshold": (0.6, 0.0, 1.0),
    "kb_pending_grace": (60.0, 5.0, 3600.0),
}
BOOL_DEFAULTS: dict[str, bool] = {"kb_answer_fallback": True, "kb_resume_interrupted": False}
CHOICES: dict[str, tuple[str, tuple[str, ...]]] = {
    "kb_retrieval_mode": ("auto", RETRIEVAL_MODES),
    "kb_search_mode": ("blend", SEARCH_MODES),
    "kb_slack_streaming": ("auto", STREAMING_MODES),
}


class _TomlSource(PydanticBaseSettingsSource):
    """Reads the optional TOML file named by KB_CONFIG (lowest priority after env)."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        path = os.environ.get("KB_CONFIG")
        if not path:
            return {}
        try:
            with open(path, "rb") as handle:
                data = tomllib.load(handle)
        except (OSError, tomllib.TOMLDecodeError) as exc:
            log.warning("KB_CONFIG %s could not be read (%s); ignoring it", path, exc)
            return {}
        return {key.lower(): value for key, value in data.items()}


class Settings(BaseSettings):
    """Every setting of the bot. Field names are the environment variable names, lowercased."""

    model_config = SettingsConfigDict(extra="ignore", case_sensitive=False, env_prefix="")

    kb_home: Path = Field(default_factory=lambda: Path.home() / ".kb")
    kb_database_url: str | None = None
    kb_chroma_url: str | None = None
    kb_config: Path | None = None

    openai_base_url: str | None = None
    openai_api_key: str | None = None
    kb_model: str | None = None
    kb_chat_model: str | None = None
    kb_aux_model: str | None = None
    kb_embedding_model: str = OFFLINE_EMBEDDING_MODEL
    kb_embedding_base_url: str | None = None
    kb_model_timeout: float = 60.0  # longest silence between two streamed chunks
    kb_model_first_token_timeout: float = 90.0  # per attempt, prompt processing included
    kb_model_deadline: float = 45.0  # an auxiliary role's whole call, all retries included
    kb_answer_deadline: float = 120.0  # the answer's first text, all retries included
    kb_model_context_tokens: int = 0  # the server's context window when it reports none (0: unknown)
    kb_model_retries: int = 3
    kb_answer_fallback: bool = True
    kb_resume_interrupted: bool = False  # answer questions interrupted by a stopped instance again
    kb_pending_grace: float = 60.0  # seconds a pending question's lock must stay free before it is swept

    kb_agent_max_rounds: int = 3
    kb_agent_evidence_tokens: int = 16000
    kb_agent_max_paragraphs: int = 40
    kb_agent_queries_per_round: int = 2
    kb_agent_candidates_per_round: int = 8
    kb_first_search_depth: int = 10
    kb_context_recent_tokens: int = 6000
    kb_dialogue_number: int = 5
    kb_question_max_tokens: int = 4000
    kb_answer_max_tokens: int = 1500
    kb_retrieval_mode: str = "auto"
    kb_search_mode: str = "blend"
    kb_short_query_length: int = 4
    kb_topk_short: int = 20
    kb_topk_medium: int = 12
    kb_topk_long: int = 8
    kb_min_score_short: float = 0.25
    kb_min_score_default: float = 0.28
    kb_coverage_threshold: float = 0.6
    kb_chunk_tokens: int = 400
    kb_max_file_mb: int = 200  # a bigger file (or archive member) is refused with its size
    kb_max_archive_mb: int = 1024  # a zip (or .docx/.xlsx/.pptx) unpacking to more is refused
    kb_datasets: Annotated[list[str], NoDecode] = Field(default_factory=list)

    kb_classifier_url: str | None = None
    kb_classifier_timeout: float = 2.0
    kb_classifier_retry_after: float = 30.0  # a failed classifier is skipped this long
    kb_rerank_url: str | None = None
    kb_rerank_model: str | None = None
    kb_rerank_api_key: str | None = None

    slack_bot_token: str | None = None
    slack_app_token: str | None = None
    slack_signing_secret: str | None = None
    slack_api_url: str | None = None
    kb_slack_streaming: str = "auto"  # auto | native | edit: how answers show up while they are written

    channels: dict[str, ChannelConfig] = Field(default_factory=dict)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return init_settings, env_settings, _TomlSource(settings_cls)

    @field_validator(*INT_RANGES, mode="before")
    @classmethod
    def _clamp_int(cls, value: Any, info: Any) -> int:
        default, low, high = INT_RANGES[info.field_name]
        return setting(info.field_name.upper(), value, default, low, high)

    @field_validator(*FLOAT_RANGES, mode="before")
    @classmethod
    def _clamp_float(cls, value: Any, info: Any) -> float:
        default, low, high = FLOAT_RANGES[info.field_name]
        return float_setting(info.field_name.upper(), value, default, low, high)

    @field_validator(*CHOICES, mode="before")
    @classmethod
    def _choice(cls, value: Any, info: Any) -> str:
        default, allowed = CHOICES[info.field_name]
        text = str(value or "").strip().lower()
        if text in allowed:
            return text
        if text:
            log.warning(
                "setting %s=%r is not one of %s; using %s", info.field_name.upper(), value, allowed, default
            )
        return default

    @field_validator("kb_datasets", mode="before")
    @classmethod
    def _split_list(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("kb_answer_fallback", "kb_resume_interrupted", mode="before")
    @classmethod
    def _bool(cls, value: Any, info: Any) -> Any:
        if isinstance(value, str):
            text = value.strip().lower()
            if text in {"1", "true", "yes", "on"}:
                return True
            if text in {"0", "false", "no", "off", ""}:
                return False
            default = BOOL_DEFAULTS[info.field_name]
            log.warning(
                "setting %s=%r is not a boolean; using %s",
                info.field_name.upper(),
                value,
                str(default).lower(),
            )
            return default
        return value

    @property
    def database_url(self) -> str:
        """KB_DATABASE_URL, or a SQLite file under KB_HOME."""
        return self.kb_database_url or f"sqlite:///{self.kb_home / 'conversations.sqlite3'}"

    @property
    def chroma_path(self) -> Path:
        return self.kb_home / "chroma"

    @property
    def uses_extractive_engine(self) -> bool:
        """True when no model endpoint is configured, or KB_MODEL=extractive."""
        if (self.kb_model or "").strip().lower() == EXTRACTIVE_MODEL:
            return True
        return not (self.openai_base_url or self.openai_api_key) or not self.chat_model

    @property
    def extractive_reason(self) -> str | None:
        """Why answers will be extractive, naming the missing setting; None when a model answers."""
        if (self.kb_model or "").strip().lower() == EXTRACTIVE_MODEL:
            return "KB_MODEL=extractive"
        if not (self.openai_base_url or self.openai_api_key):
            return "no model endpoint is configured (OPENAI_BASE_URL)"
        if not self.chat_model:
            given = "OPENAI_BASE_URL" if self.openai_base_url else "OPENAI_API_KEY"
            return f"{given} is set but no model is named (set KB_CHAT_MODEL)"
        return None

    @property
    def chat_model(self) -> str:
        return self.kb_chat_model or (self.kb_model if self.kb_model != EXTRACTIVE_MODEL else None) or ""

    @property
    def aux_model(self) -> str:
        """KB_AUX_MODEL, defaulting to the chat model."""
        return self.kb_aux_model or self.chat_model

    def channel(self, channel_id: str) -> ChannelConfig:
        """The channel's entry, else the "default" entry, else no restriction. An entry without `datasets`
        inherits the default entry's, then KB_DATASETS, then every dataset (datasets None), as the CLI
        searches; `datasets = []` locks the channel out."""
        default = self.channels.get("default")
        entry = self.channels.get(channel_id) or default or ChannelConfig()
        if entry.datasets is not None:
            return entry
        inherited = default.datasets if default is not None else None
        if inherited is None and self.kb_datasets:
            inherited = list(self.kb_datasets)
        return entry.model_copy(update={"datasets": inherited})

    @property
    def unlisted_channels_search_everything(self) -> bool:
        """True when a channel without its own entry searches every dataset (no default scope anywhere)."""
        default = self.channels.get("default")
        return not self.kb_datasets and (default is None or default.datasets is None)
