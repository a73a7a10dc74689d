"""The message catalogues: the same keys in every language, valid templates, and the one language rule."""

from __future__ import annotations

import importlib
import string

import pytest

from adapters.slack.rendering.texts import SLACK
from bot.cli.texts import CLI
from core.errors import KbError, NotFound
from core.messages import CORE, LANGUAGES, Catalogue, language, per_language, phrase, text
from tests.test_architecture import ROOT, catalogue_folders

CATALOGUES = {"core": CORE, "slack": SLACK, "cli": CLI}


def test_every_catalogue_folder_is_checked_here() -> None:
    """Each folder with a zh.py and an en.py builds one of the catalogues these tests check."""
    for folder in catalogue_folders():
        module = importlib.import_module(".".join(folder.relative_to(ROOT).parts))
        built = [value for value in vars(module).values() if isinstance(value, Catalogue)]
        assert len(built) == 1 and built[0] in CATALOGUES.values(), folder


@pytest.mark.parametrize("name", sorted(CATALOGUES))
def test_chinese_and_english_have_the_same_keys(name: str) -> None:
    """No key is missing from either language's module of a catalogue."""
    modules = CATALOGUES[name].templates
    assert sorted(modules) == sorted(LANGUAGES)
    assert set(modules["zh"]) == set(modules["en"])
    assert len(modules["zh"]) > 10


@pytest.mark.parametrize("name", sorted(CATALOGUES))
def test_every_template_is_a_format_string_with_named_fields(name: str) -> None:
    """Each template parses as a str.format template whose fields all have names (no stray brace)."""
    for lang, templates in CATALOGUES[name].templates.items():
        for key, template in templates.items():
            fields = [field for _, field, _, _ in string.Formatter().parse(template) if field is not None]
            assert all(fields), (lang, key)


def test_a_catalogue_whose_languages_differ_is_refused() -> None:
    """Building a catalogue with a key in one language only, or without a language, fails at once."""
    with pytest.raises(ValueError, match="different keys"):
        Catalogue({"zh": {"a": "甲", "b": "乙"}, "en": {"a": "A"}})
    with pytest.raises(ValueError, match="no en"):
        Catalogue({"zh": {"a": "甲"}})


def test_a_known_language_is_used_and_any_other_reads_english() -> None:
    """zh and en as they are; an unknown, empty, missing or non-string language falls back to English."""
    assert [language(value) for value in ("zh", "en", "fr", "", None, "both", 3)] == [
        "zh",
        "en",
        "en",
        "en",
        "en",
        "en",
        "en",
    ]
    sample = Catalogue({"zh": {"n": "共 {n} 条"}, "en": {"n": "{n} items"}})
    assert sample.text("n", "zh", n=3) == "共 3 条"
    assert sample.text("n", "ja", n=3) == "3 items"
    assert sample.in_every_language("n", n=2) == ("共 2 条", "2 items")
    assert per_language("zh", zh="甲", en="A") == "甲" and per_language("de", zh="甲", en="A") == "A"
    assert (
        text("stop.sufficient", "zh") == "资料充分" and text("stop.sufficient", "?") == "evidence sufficient"
    )


def test_an_error_carries_a_phrase_shown_in_the_readers_language() -> None:
    """A domain error's message is put into a language when shown, or into both when none is known."""
    error = NotFound(phrase("error.record_not_found", record_id=7))
    assert error.message("zh") == "找不到记录 7。"
    assert error.message("en") == str(error) == "Record 7 was not found."
    assert error.in_both_languages() == "找不到记录 7。 / Record 7 was not found."
    assert str(KbError(phrase("error.record_not_found", record_id=7), detail="row 7 gone")) == "row 7 gone"
    with pytest.raises(KeyError):
        phrase("error.no_such_key")
