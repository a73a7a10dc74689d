"""User-facing text by key, one module per language (zh.py, en.py), and the one rule that picks a language.

A :class:`Catalogue` holds ``str.format`` templates by language, then key; ``text(key, lang, **fields)``
looks one up. The language rule lives here only: a known language (:data:`LANGUAGES`) is used as it is,
anything else (a missing or unknown language) reads English. The answer path's text (core, the engines,
the stores) is this package's catalogue, :data:`CORE`; the front ends keep their own catalogues built the
same way (adapters/slack/rendering/texts/, bot/cli/texts/). See docs/design.md#the-message-catalogues.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from core.messages import en, zh

LANGUAGES: tuple[str, ...] = (
    "zh",
    "en",
)  # every catalogue has these, listed in this order when both are said
FALLBACK_LANGUAGE = "en"
BOTH_SEPARATOR = " / "

T = TypeVar("T")


def language(lang: object) -> str:
    """The language text is given in for lang: lang itself when it is a known language, else English."""
    return lang if isinstance(lang, str) and lang in LANGUAGES else FALLBACK_LANGUAGE


def per_language(lang: str, /, **values: T) -> T:
    """The value for lang's language among values given per language (``zh=..., en=...``): for text kept
    outside a catalogue, such as the model's system prompts (core/answering/prompts.py)."""
    return values[language(lang)]


@dataclass(frozen=True, slots=True)
class Catalogue:
    """Templates by language, then key; every language has the same keys (checked when built)."""

    templates: Mapping[str, Mapping[str, str]]

    def __post_init__(self) -> None:
        absent = [lang for lang in LANGUAGES if lang not in self.templates]
        if absent:
            raise ValueError(f"the catalogue has no {', '.join(absent)} templates")
        every = set().union(*(self.templates[lang] for lang in LANGUAGES))
        lacking = {lang: sorted(every - set(self.templates[lang])) for lang in LANGUAGES}
        if any(lacking.values()):
            raise ValueError(f"the catalogue's languages have different keys; missing: {lacking}")

    def __contains__(self, key: object) -> bool:
        return key in self.templates[FALLBACK_LANGUAGE]

    def keys(self) -> frozenset[str]:
        """Every key of the catalogue."""
        return frozenset(self.templates[FALLBACK_LANGUAGE])

    def text(self, key: str, lang: str, /, **fields: object) -> str:
        """The template for key in lang's language (English for an unknown one), formatted with fields."""
        return self.templates[language(lang)][key].format(**fields)

    def in_every_language(self, key: str, /, **fields: object) -> tuple[str, ...]:
        """The text for key in each of LANGUAGES, in that order."""
        return tuple(self.text(key, lang, **fields) for lang in LANGUAGES)

    def phrase(self, key: str, /, **fields: object) -> Phrase:
        """key with its fields, to be put into a language later (an unknown key fails here, not when shown)."""
        if key not in self:
            raise KeyError(key)
        return Phrase(self, key, dict(fields))


@dataclass(frozen=True, slots=True)
class Phrase:
    """A catalogue message and its fields, put into a language only when shown (an error's message)."""

    catalogue: Catalogue
    key: str
    fields: Mapping[str, object] = field(default_factory=dict)

    def text(self, lang: str) -> str:
        """The message in lang's language."""
        return self.catalogue.text(self.key, lang, **self.fields)

    def in_both_languages(self) -> str:
        """The message in every language, "中文 / English": for a reader whose language is not known."""
        return BOTH_SEPARATOR.join(self.catalogue.in_every_language(self.key, **self.fields))


CORE = Catalogue({"zh": zh.MESSAGES, "en": en.MESSAGES})


def text(key: str, lang: str, /, **fields: object) -> str:
    """The core catalogue's text for key in lang's language, formatted with fields."""
    return CORE.text(key, lang, **fields)


def in_every_language(key: str, /, **fields: object) -> tuple[str, ...]:
    """The core catalogue's text for key in each language (to recognise it in text of either language)."""
    return CORE.in_every_language(key, **fields)


def phrase(key: str, /, **fields: object) -> Phrase:
    """A core catalogue message with its fields, for an error raised now and shown later."""
    return CORE.phrase(key, **fields)
