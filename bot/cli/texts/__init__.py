"""The `kb` command line's message catalogue, one module per language (zh.py, en.py), looked up by key with
core's language rule (core.messages); the answer path's own text is core's catalogue."""

from __future__ import annotations

from bot.cli.texts import en, zh
from core.messages import Catalogue, Phrase

CLI = Catalogue({"zh": zh.MESSAGES, "en": en.MESSAGES})


def t(key: str, lang: str, /, **fields: object) -> str:
    """The text for key in lang (an unknown language, such as "both", reads English), formatted with fields."""
    return CLI.text(key, lang, **fields)


def phrase(key: str, /, **fields: object) -> Phrase:
    """A CLI message with its fields, for an error raised now and shown in the reader's language later."""
    return CLI.phrase(key, **fields)
