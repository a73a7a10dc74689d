"""Putting untrusted text (documents, their names and headings, questions, history, summaries) into prompts
so that it can never close or forge the structure around it (pure).

Prompts mark their parts with XML-like tags (<evidence>, <paragraph>, <question>, <history>, ...). Text
placed inside a tag has its delimiter characters escaped as XML does (& < > and, in attributes, "), so a
document containing "</paragraph></evidence>" or a forged "<question>" stays plain text inside its own
element; the only real tags in a prompt are the ones the program wrote. JSON placed inside a tag also has
<, > and & written as \\u escapes (still the same JSON). The system prompts tell the model how to read the
escapes.
"""

from __future__ import annotations

import json
import re
from typing import Any

_TEXT = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
_ATTRIBUTE = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})
_JSON = str.maketrans({"&": "\\u0026", "<": "\\u003c", ">": "\\u003e"})


def escape_text(text: str) -> str:
    """Text for inside an element: &, < and > escaped."""
    return text.translate(_TEXT)


_UNESCAPES = {"&lt;": "<", "&gt;": ">", "&amp;": "&", "&quot;": '"'}
_UNESCAPE = re.compile("|".join(map(re.escape, _UNESCAPES)))
LONGEST_ESCAPE = max(map(len, _UNESCAPES))


def unescape_text(text: str) -> str:
    """The escapes of escape_text/escape_attribute read back: what a model copies from a prompt ("制度 &gt;
    住宿") is shown as the document wrote it."""
    return _UNESCAPE.sub(lambda m: _UNESCAPES[m.group(0)], text)


def escape_attribute(text: str) -> str:
    """Text for inside a double-quoted attribute: &, <, > and " escaped; line breaks become spaces."""
    return " ".join(text.split()).translate(_ATTRIBUTE)


def element(name: str, text: str, *, block: bool = False, **attributes: str) -> str:
    """<name a="..">escaped text</name>; block puts the text on its own lines."""
    attrs = "".join(f' {key}="{escape_attribute(value)}"' for key, value in attributes.items())
    body = escape_text(text)
    return f"<{name}{attrs}>\n{body}\n</{name}>" if block else f"<{name}{attrs}>{body}</{name}>"


def json_data(value: Any) -> str:
    """JSON text that cannot contain a tag: <, > and & as \\u escapes (json.loads reads the same value)."""
    return json.dumps(value, ensure_ascii=False).translate(_JSON)
