"""A Markdown file's metadata block, read as metadata and never indexed: YAML front matter (``---``) or
the ``key: value`` header of Python-Markdown's meta extension, which MkDocs reads (``title:``).

The meta header has no delimiter, so it is recognised only by the keys MkDocs and Python-Markdown
document; a first line such as "Note: ..." stays text.
"""

from __future__ import annotations

import re

import yaml

from core.knowledge.chunking import FRONT_MATTER

_META_LINE = re.compile(r"^([A-Za-z][A-Za-z0-9_-]*):[ \t]*(.*)$")
_CONTINUATION = re.compile(r"^(?: {4}|\t)[ \t]*(\S.*)$")
META_KEYS = frozenset(
    {"title", "summary", "description", "authors", "author", "date", "tags", "keywords", "template", "hide"}
)


def _yaml_block(text: str) -> tuple[dict[str, str], str] | None:
    match = FRONT_MATTER.match(text)
    if match is None:
        return None
    try:
        loaded = yaml.safe_load(match.group(1) or "")
    except yaml.YAMLError:
        loaded = None
    fields = {str(k).lower(): str(v) for k, v in loaded.items()} if isinstance(loaded, dict) else {}
    return fields, text[match.end() :]


def _meta_block(text: str) -> tuple[dict[str, str], str] | None:
    lines = text.split("\n")
    fields: dict[str, str] = {}
    key = ""
    end = next((at for at, line in enumerate(lines) if not line.strip()), len(lines))
    for line in lines[:end]:
        if (meta := _META_LINE.match(line)) is not None:
            key = meta.group(1).lower()
            fields[key] = meta.group(2).strip()
        elif key and (more := _CONTINUATION.match(line)) is not None:
            fields[key] = f"{fields[key]} {more.group(1)}".strip()
        else:
            return None
    if not fields or not set(fields) <= META_KEYS:
        return None
    return fields, "\n".join(lines[end:])


def split_front_matter(markdown: str) -> tuple[dict[str, str], str]:
    """(metadata with lower-case keys, the text after it); ({}, markdown) when it has no metadata block."""
    text = markdown.lstrip("\ufeff")
    for block in (_yaml_block(text), _meta_block(text)):
        if block is not None:
            return block
    return {}, markdown
