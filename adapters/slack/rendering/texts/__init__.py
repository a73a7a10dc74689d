"""The Slack adapter's message catalogue: every user-facing Slack string, one module per language (zh.py,
en.py), looked up by key with core's language rule (core.messages)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from adapters.slack.rendering.texts import en, zh
from core.messages import Catalogue
from core.text import is_chinese

Lang = str  # "zh" | "en"

SLACK = Catalogue({"zh": zh.MESSAGES, "en": en.MESSAGES})
_TOO_LONG = re.compile(r"about (\d+) tokens, the limit is (\d+)")


def t(key: str, lang: Lang, /, **values: Any) -> str:
    """The text for key in lang (an unknown language reads English), formatted with values."""
    return SLACK.text(key, lang, **values)


def failure_text(code: str, message: str, details: Mapping[str, Any], lang: Lang) -> str:
    """A pipeline failure in the user's language (details may carry "zh"/"en" texts).

    The pipeline's message is shown as it is when it is Chinese already, or in English; a Chinese reader
    of an English message gets the catalogue's ``failure.<code>`` text (the message itself for a code the
    catalogue does not name).
    """
    localized = details.get(lang) or details.get(f"message_{lang}")
    if isinstance(localized, str) and localized:
        return localized
    key = f"failure.{code}"
    if is_chinese(message) or key not in SLACK:
        return message
    fields: dict[str, Any] = {"message": message}
    if code == "question_too_long":
        sizes = _TOO_LONG.search(message)
        if sizes is None:
            return message
        fields.update(tokens=sizes.group(1), limit=sizes.group(2))
    return t(key, lang, **fields)
