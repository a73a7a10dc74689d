"""Typed settings from the environment and an optional TOML file (KB_CONFIG), validated once at start.

Settings groups them (`settings.model.timeout`, `settings.agent.max_rounds`, ...); each variable keeps its
documented name (KB_MODEL_TIMEOUT, KB_AGENT_MAX_ROUNDS). A bad value never stops the bot: an out-of-range
number clamps to its bound and an unparsable one falls back to the default, each with one warning.
"""

from bot.settings.bad_values import field_bounds
from bot.settings.groups import (
    EXTRACTIVE_MODEL,
    OFFLINE_EMBEDDING_MODEL,
    AgentSettings,
    AnswerSettings,
    ClassifierSettings,
    ContextSettings,
    EmbeddingSettings,
    IngestSettings,
    ModelSettings,
    RerankSettings,
    SearchSettings,
    SlackSettings,
    StorageSettings,
)
from bot.settings.root import Settings
from bot.settings.sources import SettingField, nest_flat_keys, setting_fields

__all__ = [
    "EXTRACTIVE_MODEL",
    "OFFLINE_EMBEDDING_MODEL",
    "AgentSettings",
    "AnswerSettings",
    "ClassifierSettings",
    "ContextSettings",
    "EmbeddingSettings",
    "IngestSettings",
    "ModelSettings",
    "RerankSettings",
    "SearchSettings",
    "SettingField",
    "Settings",
    "SlackSettings",
    "StorageSettings",
    "field_bounds",
    "nest_flat_keys",
    "setting_fields",
]
