"""README's configuration table matches the settings model: every variable, its default and its range."""

from __future__ import annotations

import re
from pathlib import Path

from bot.settings import FLOAT_RANGES, INT_RANGES, Settings

README = Path(__file__).resolve().parents[1] / "README.md"
TOML_ONLY = {"channels"}  # per-channel sections live in the KB_CONFIG file, described in the prose
_NAME = re.compile(r"`([A-Z_]+)`")
_NUMBER = re.compile(r"^\d+(?:\.\d+)?")
_RANGE = re.compile(r"\((\d+(?:\.\d+)?)\.\.(\d+(?:\.\d+)?)\)")


def table_rows() -> dict[str, str]:
    """{field name: the default column} from the README's configuration table."""
    section = README.read_text(encoding="utf-8").split("## Configuration", 1)[1].split("\n## ", 1)[0]
    rows: dict[str, str] = {}
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        _, names, default, _meaning, _ = line.split("|")
        variables: list[str] = []
        for name in _NAME.findall(names):
            if name.startswith("_") and variables:  # `KB_TOPK_SHORT` / `_MEDIUM`: same stem
                name = variables[-1].rsplit("_", 1)[0] + name
            variables.append(name)
        defaults = [part.strip() for part in re.split(r" / |, ", default.strip())]
        for index, name in enumerate(variables):
            rows[name.lower()] = defaults[index] if len(defaults) == len(variables) else default.strip()
    return rows


def test_every_setting_is_in_the_readme_table_and_nothing_else() -> None:
    """The table names exactly the settings model's fields (environment variables)."""
    documented = set(table_rows())
    fields = set(Settings.model_fields) - TOML_ONLY
    assert sorted(fields - documented) == [] and sorted(documented - fields) == []


def test_numeric_defaults_and_ranges_in_the_table_are_the_codes() -> None:
    """Each numeric default (and a documented low..high range) equals the settings model's."""
    rows = table_rows()
    defaults = Settings.model_construct()
    checked = 0
    for name, text in rows.items():
        value = getattr(defaults, name, None)
        if isinstance(value, bool) or not isinstance(value, int | float):
            continue
        number = _NUMBER.match(text)
        assert number is not None, (name, text)
        assert float(number.group(0)) == float(value), (name, text, value)
        documented = _RANGE.search(text)
        if documented:
            _, low, high = {**INT_RANGES, **FLOAT_RANGES}[name]
            assert (float(documented.group(1)), float(documented.group(2))) == (low, high), name
        checked += 1
    assert checked >= 20


def test_text_defaults_in_the_table_are_the_codes() -> None:
    """Modes, the embedding model and the answer fallback are documented with the code's defaults."""
    rows = table_rows()
    defaults = Settings.model_construct()
    for name in ("kb_retrieval_mode", "kb_search_mode", "kb_embedding_model"):
        assert rows[name] == f"`{getattr(defaults, name)}`", name
    assert rows["kb_answer_fallback"] == str(defaults.kb_answer_fallback).lower()
