"""Settings: the groups (bot.settings.groups), the per-channel scopes, and the order their sources apply.

Init arguments beat the environment, which beats the KB_CONFIG file (bot.settings.sources); a bad value
is logged and replaced (bot.settings.bad_values), so a typo never stops the bot.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from adapters.slack.inbound.channel_config import ChannelConfig
from bot.settings.groups import (
    AgentSettings,
    AnswerSettings,
    ClassifierSettings,
    ContextSettings,
    EmbeddingSettings,
    IngestSettings,
    LogSettings,
    ModelSettings,
    RerankSettings,
    SearchSettings,
    SlackSettings,
    StorageSettings,
)
from bot.settings.sources import GroupedEnvironment, KbConfigFile


class Settings(BaseSettings):
    """Every setting of the bot, by group; README's Configuration table lists each variable and TOML key."""

    model_config = SettingsConfigDict(extra="forbid", case_sensitive=False, validate_by_name=True)

    config: Path | None = Field(default=None, validation_alias="KB_CONFIG")
    storage: StorageSettings = Field(default_factory=StorageSettings)
    model: ModelSettings = Field(default_factory=ModelSettings)
    answer: AnswerSettings = Field(default_factory=AnswerSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    context: ContextSettings = Field(default_factory=ContextSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    classifier: ClassifierSettings = Field(default_factory=ClassifierSettings)
    rerank: RerankSettings = Field(default_factory=RerankSettings)
    slack: SlackSettings = Field(default_factory=SlackSettings)
    logs: LogSettings = Field(default_factory=LogSettings)
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
        return init_settings, GroupedEnvironment(settings_cls), KbConfigFile(settings_cls)

    def replace(self, **groups: Mapping[str, Any]) -> Settings:
        """A copy with some fields of some groups changed (validated), e.g. replace(context={"recent_tokens": 512})."""
        changed: dict[str, Any] = {}
        for name, values in groups.items():
            group = getattr(self, name)
            changed[name] = type(group).model_validate({**group.model_dump(), **values})
        return self.model_copy(update=changed)

    def channel(self, channel_id: str) -> ChannelConfig:
        """The channel's entry, else the "default" entry, else no restriction. An entry without `datasets`
        inherits the default entry's, then KB_DATASETS, then every dataset (datasets None), as the CLI
        searches; `datasets = []` locks the channel out."""
        default = self.channels.get("default")
        entry = self.channels.get(channel_id) or default or ChannelConfig()
        if entry.datasets is not None:
            return entry
        inherited = default.datasets if default is not None else None
        if inherited is None and self.search.datasets:
            inherited = list(self.search.datasets)
        return entry.model_copy(update={"datasets": inherited})

    @property
    def unlisted_channels_search_everything(self) -> bool:
        """True when a channel without its own entry searches every dataset (no default scope anywhere)."""
        default = self.channels.get("default")
        return not self.search.datasets and (default is None or default.datasets is None)
