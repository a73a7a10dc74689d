"""Where settings come from: each field's own environment variable, then the TOML file named by KB_CONFIG.

pydantic-settings maps environment variables onto nested fields only through a delimiter
(`MODEL__TIMEOUT`), but the variables keep the names they have always had (KB_MODEL_TIMEOUT,
OPENAI_BASE_URL, SLACK_BOT_TOKEN), so each field names its variable (validation_alias) and
GroupedEnvironment reads exactly those, into the nested shape. The file is read by pydantic-settings'
TomlConfigSettingsSource; KbConfigFile only adds what this project promises about it: the flat `kb_*` keys
of older files still apply (each moved to its group), an unknown key is logged and ignored, and a file that
cannot be read is logged and ignored, so a config file never stops the bot.
"""

from __future__ import annotations

import logging
import os
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, EnvSettingsSource, TomlConfigSettingsSource

from bot.settings.bad_values import SettingsGroup, env_name

log = logging.getLogger("bot.settings")


@dataclass(frozen=True, slots=True)
class SettingField:
    """One setting: its group (None at the top level), its field name there, its environment variable."""

    group: str | None
    name: str
    env: str
    info: FieldInfo

    @property
    def key(self) -> str:
        """Its dotted TOML key (`model.timeout`)."""
        return f"{self.group}.{self.name}" if self.group else self.name


def _group_class(info: FieldInfo) -> type[SettingsGroup] | None:
    annotation = info.annotation
    return annotation if isinstance(annotation, type) and issubclass(annotation, SettingsGroup) else None


def setting_fields(settings_cls: type[BaseSettings]) -> Iterator[SettingField]:
    """Every setting read from the environment: the groups' fields, and top-level fields with an alias."""
    for group, info in settings_cls.model_fields.items():
        group_cls = _group_class(info)
        if group_cls is None:
            if isinstance(info.validation_alias, str):
                yield SettingField(None, group, info.validation_alias, info)
            continue
        for name, field in group_cls.model_fields.items():
            yield SettingField(group, name, env_name(field, name), field)


def nest_flat_keys(settings_cls: type[BaseSettings], data: Mapping[str, Any]) -> dict[str, Any]:
    """data with flat keys named like the environment variables (`kb_agent_max_rounds`, any case) moved
    into their groups (`{"agent": {"max_rounds": ...}}`); a nested value of the same setting wins."""
    by_env = {field.env.lower(): field for field in setting_fields(settings_cls)}
    nested: dict[str, Any] = {}
    flat: list[tuple[SettingField, Any]] = []
    for key, value in data.items():
        field = by_env.get(key.lower())
        if field is None:
            nested[key] = value
        elif field.group is None:
            nested[field.name] = value
        else:
            flat.append((field, value))
    for field, value in flat:
        group = nested.get(field.group or "")
        if group is None:
            group = nested[field.group or ""] = {}
        if isinstance(group, dict):
            group.setdefault(field.name, value)
    return nested


def _known_only(settings_cls: type[BaseSettings], data: dict[str, Any], origin: str) -> dict[str, Any]:
    """data without the keys no field reads, each logged (a typo in a config file is not fatal); a group's
    keys may also be its variables' names, and become the field names."""
    known: dict[str, Any] = {}
    for key, value in data.items():
        info = settings_cls.model_fields.get(key)
        if info is None:
            log.warning("%s: unknown setting %r; ignoring it", origin, key)
            continue
        group_cls = _group_class(info)
        if group_cls is not None and isinstance(value, dict):
            names = {name.lower(): name for name in group_cls.model_fields}
            names |= {env_name(field, name).lower(): name for name, field in group_cls.model_fields.items()}
            table: dict[str, Any] = {}
            for given, item in value.items():
                name = names.get(given.lower())
                if name is None:
                    log.warning("%s: unknown setting %r; ignoring it", origin, f"{key}.{given}")
                else:
                    table.setdefault(name, item)
            value = table
        known[key] = value
    return known


class GroupedEnvironment(EnvSettingsSource):
    """Each setting from its own environment variable (case-insensitive), nested by group; empty is unset."""

    def __call__(self) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for field in setting_fields(self.settings_cls):
            raw = self.env_vars.get(field.env.lower())
            if raw is None or not raw.strip():
                continue
            if field.group is None:
                found[field.name] = raw
            else:
                found.setdefault(field.group, {})[field.name] = raw
        return found


class KbConfigFile(TomlConfigSettingsSource):
    """The TOML file named by KB_CONFIG: nested tables per group, `[channels.<id>]`, and the old flat keys."""

    def __init__(self, settings_cls: type[BaseSettings]) -> None:
        self.origin = os.environ.get("KB_CONFIG") or ""
        self.fields_of = settings_cls  # the file is read inside super().__init__, before it sets settings_cls
        path = Path(self.origin) if self.origin else None
        if path is not None and not path.expanduser().is_file():
            log.warning("KB_CONFIG %s could not be read (no such file); ignoring it", self.origin)
        super().__init__(settings_cls, toml_file=path)

    def _read_file(self, file_path: Any) -> dict[str, Any]:
        try:
            data = super()._read_file(file_path)
        except (OSError, tomllib.TOMLDecodeError) as exc:
            log.warning("KB_CONFIG %s could not be read (%s); ignoring it", self.origin, exc)
            return {}
        nested = nest_flat_keys(self.fields_of, {key.lower(): value for key, value in data.items()})
        return _known_only(self.fields_of, nested, f"KB_CONFIG {self.origin}")
