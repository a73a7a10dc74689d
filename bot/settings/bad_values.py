"""A bad setting never stops the bot: it is logged once and replaced, generically from the field's metadata.

The product decision (README, Configuration): an out-of-range number clamps to its bound, and a value that
does not parse (a number, a boolean, one of a Literal's choices) falls back to the default, each with one
warning line naming the setting by its environment variable, the value given and what is allowed, e.g.
`setting KB_AGENT_MAX_ROUNDS=9 is outside 1..6; using 6`. Pydantic parses and checks (`Field(ge=, le=)`,
`Literal[...]`, `bool`); it has no notion of "replace instead of refuse", so SettingsGroup's wrap
validator reads the bounds and the choices off the field and does that.
"""

from __future__ import annotations

import logging
import typing
from typing import Any, Literal

import annotated_types
from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError, ValidationInfo, field_validator
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

log = logging.getLogger("bot.settings")

_RANGE_ERRORS = frozenset({"greater_than_equal", "less_than_equal", "greater_than", "less_than"})
_BOOLEAN_WORDS = "true/false, yes/no, on/off, 1/0"


def env_name(field: FieldInfo, name: str) -> str:
    """The environment variable a field is read from (its validation_alias), else its name in capitals."""
    alias = field.validation_alias
    return alias if isinstance(alias, str) else name.upper()


def field_bounds(field: FieldInfo) -> tuple[Any, Any]:
    """The (low, high) of a number field's Field(ge=, le=), None where unbounded."""
    low = high = None
    for rule in field.metadata:
        if isinstance(rule, annotated_types.Ge):
            low = rule.ge
        elif isinstance(rule, annotated_types.Le):
            high = rule.le
    return low, high


def choices(field: FieldInfo) -> tuple[str, ...] | None:
    """A Literal field's allowed strings, else None."""
    if typing.get_origin(field.annotation) is Literal:
        return tuple(str(arg) for arg in typing.get_args(field.annotation))
    return None


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return f"{value:g}" if isinstance(value, float) else str(value)


def _allowed(field: FieldInfo) -> str:
    """What the field accepts, for the warning."""
    options = choices(field)
    if options is not None:
        return f"one of {', '.join(options)}"
    if field.annotation is bool:
        return f"a boolean ({_BOOLEAN_WORDS})"
    kind = "an integer" if field.annotation is int else "a number" if field.annotation is float else None
    if kind is None:
        return "valid"
    low, high = field_bounds(field)
    return f"{kind} in {_shown(low)}..{_shown(high)}" if low is not None and high is not None else kind


def replacement(field: FieldInfo, name: str, value: Any, error: ValidationError) -> tuple[Any, str]:
    """The value to use instead of a bad one, and the warning that says so."""
    setting = env_name(field, name)
    if {item["type"] for item in error.errors()} <= _RANGE_ERRORS:
        number = TypeAdapter(field.annotation or Any).validate_python(value)
        low, high = field_bounds(field)
        clamped = max(low, number) if low is not None else number
        clamped = min(high, clamped) if high is not None else clamped
        return (
            clamped,
            f"setting {setting}={_shown(number)} is outside {_shown(low)}..{_shown(high)}; using {_shown(clamped)}",
        )
    default = field.get_default(call_default_factory=True)
    return (
        default,
        f"setting {setting}={value!r} is not {_allowed(field)}; using the default {_shown(default)}",
    )


class SettingsGroup(BaseModel):
    """A group of settings (one TOML table); each field names its environment variable (validation_alias)."""

    model_config = ConfigDict(
        extra="forbid", validate_by_name=True, validate_by_alias=True, allow_inf_nan=False
    )

    @field_validator("*", mode="wrap")
    @classmethod
    def _replace_a_bad_value(cls, value: Any, handler: Any, info: ValidationInfo) -> Any:
        field = cls.model_fields[info.field_name or ""]
        given = value
        if choices(field) is not None and isinstance(value, str):
            value = value.strip().lower()  # modes are matched in any case, as they always were
        try:
            return handler(value)
        except ValidationError as error:
            if field.get_default() is PydanticUndefined and field.default_factory is None:
                raise
            chosen, warning = replacement(field, info.field_name or "", given, error)
            log.warning("%s", warning)
            return chosen
