"""README's configuration table matches the settings model: every variable, its TOML key, default and range."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from bot.settings import Settings, field_bounds, setting_fields

README = Path(__file__).resolve().parents[1] / "README.md"
_NAME = re.compile(r"`([A-Z_]+)`")
_KEY = re.compile(r"`([a-z_]+\.[a-z_]+)`")
_NUMBER = re.compile(r"^\d+(?:\.\d+)?")
_RANGE = re.compile(r"\((?:each )?(\d+(?:\.\d+)?)\.\.(\d+(?:\.\d+)?)\)")


@dataclass(frozen=True)
class Row:
    """One variable of the table: its TOML key, its default column, and its meaning column."""

    key: str
    default: str
    meaning: str


def table_rows() -> dict[str, Row]:
    """{variable: its row} from the README's configuration table."""
    section = README.read_text(encoding="utf-8").split("## Configuration", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, Row] = {}
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        _, names, keys, default, meaning, _ = line.split("|")
        variables: list[str] = []
        for name in _NAME.findall(names):
            if name.startswith("_") and variables:  # `KB_TOPK_SHORT` / `_MEDIUM`: same stem
                name = variables[-1].rsplit("_", 1)[0] + name
            variables.append(name)
        toml_keys = _KEY.findall(keys) or ["—"] * len(variables)
        assert len(toml_keys) == len(variables), line
        defaults = [part.strip() for part in re.split(r" / |, ", default.strip())]
        for index, name in enumerate(variables):
            text = defaults[index] if len(defaults) == len(variables) else default.strip()
            rows[name] = Row(toml_keys[index], text, meaning.strip())
    return rows


def test_every_setting_is_in_the_readme_table_and_nothing_else() -> None:
    """The table names exactly the variables the settings read, each with its TOML key (group.field)."""
    rows = table_rows()
    fields = {field.env: field for field in setting_fields(Settings)}
    assert sorted(fields.keys() - rows.keys()) == [] and sorted(rows.keys() - fields.keys()) == []
    for env, field in fields.items():
        expected = field.key if field.group else "—"  # a top-level field (KB_CONFIG) is not in the file
        assert rows[env].key == expected, env
    assert len(fields) >= 50


def test_numeric_defaults_and_ranges_in_the_table_are_the_codes() -> None:
    """Each numeric default equals the model's, and every bounded number documents its low..high."""
    rows = table_rows()
    checked = 0
    for field in setting_fields(Settings):
        default = field.info.get_default(call_default_factory=True)
        if isinstance(default, bool) or not isinstance(default, int | float):
            continue
        text = rows[field.env].default
        number = _NUMBER.match(text)
        assert number is not None, (field.env, text)
        assert float(number.group(0)) == float(default), (field.env, text, default)
        low, high = field_bounds(field.info)
        documented = _RANGE.search(text) or _RANGE.search(rows[field.env].meaning)
        assert documented is not None, f"{field.env}: README gives no range for {low}..{high}"
        assert (float(documented.group(1)), float(documented.group(2))) == (low, high), field.env
        checked += 1
    assert checked >= 25


def test_text_defaults_in_the_table_are_the_codes() -> None:
    """Modes, the embedding model and the booleans are documented with the code's defaults."""
    rows = table_rows()
    defaults = {
        field.env: field.info.get_default(call_default_factory=True) for field in setting_fields(Settings)
    }
    for env in ("KB_RETRIEVAL_MODE", "KB_SEARCH_MODE", "KB_EMBEDDING_MODEL", "KB_SLACK_STREAMING"):
        assert rows[env].default == f"`{defaults[env]}`", env
    for env in ("KB_ANSWER_FALLBACK", "KB_RESUME_INTERRUPTED"):
        assert rows[env].default == str(defaults[env]).lower(), env
