"""The one way prompts are built: untrusted text (documents, their names and headings, questions, history,
summaries, gaps, queries) goes in as data that can never close or forge the structure around it (pure).

The rule, the same for every text put into any prompt of any role:

1. Chat-template control sequences are neutralised. Chat servers such as llama.cpp apply the chat
   template and then read special tokens off the raw prompt text, so a document holding one could open a
   system turn. The families in use are of two shapes. Angle forms (`<|im_start|>`, `<|eot_id|>`,
   `<|start_header_id|>`, `<s>`, `</s>`, `<<SYS>>`, `<start_of_turn>`, `<|user|>`, `<｜User｜>`, Falcon's
   `>>QUESTION<<`, ... in any case and with any inner spaces) all hold a "<", which step 2 always escapes,
   so none can reach the model as written. Bracket forms (`[INST]`, `[/INST]`, `[SYSTEM_PROMPT]`,
   `[TOOL_CALLS]`, `[gMASK]`, ...) hold nothing that is escaped: every "[" that opens one ASCII word in
   brackets (an optional "/", inner spaces and any case allowed: `[ /inst ]`) gets an invisible
   SEPARATOR (U+200B) after it, so the raw text no longer matches the token. unescape_text drops the
   separator again when a model copies it.
2. Delimiters are escaped in the form of the container: text inside an element has & < > escaped as
   XML does (and " too inside an attribute); JSON has < and & written as \\u escapes (still the same
   JSON; ">" alone opens neither a tag nor a special token, and headings use " > " as their path).

So the only tags and tokens in a prompt are the ones the program wrote; the system prompts tell the
model how to read the escapes. Prompts are assembled only here: `prompt()` and `message()` take their
parts as Markup (text the program wrote: rules, labels, its own tags, elements and JSON made here) or as
plain str, which is data and is escaped; nothing else in the project constructs a Message
(tests/test_prompt_architecture.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from core.budget import clip
from core.models import Message

SEPARATOR = "\u200b"
# "[" before one ASCII word in brackets, "/" and inner spaces allowed: [INST], [/INST], [ inst ], [gMASK].
_BRACKET_TOKEN = re.compile(r"\[(?=\s*/?\s*[A-Za-z][A-Za-z0-9_]*\s*\])")
_TEXT = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
_ATTRIBUTE = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})
_JSON = str.maketrans({"&": "\\u0026", "<": "\\u003c"})


def neutralise(text: str) -> str:
    """Bracket-form control tokens broken by the separator ([INST] -> [\\u200bINST]); idempotent."""
    return _BRACKET_TOKEN.sub("[" + SEPARATOR, text)


def escape_text(text: str) -> str:
    """Text for inside an element: control tokens neutralised, &, < and > escaped."""
    return neutralise(text).translate(_TEXT)


_UNESCAPES = {"&lt;": "<", "&gt;": ">", "&amp;": "&", "&quot;": '"'}
_UNESCAPE = re.compile("|".join(map(re.escape, _UNESCAPES)))
LONGEST_ESCAPE = max(map(len, _UNESCAPES))


def unescape_text(text: str) -> str:
    """The escapes of escape_text/escape_attribute read back, separators dropped: what a model copies from a
    prompt ("制度 &gt; 住宿") is shown as the document wrote it."""
    return _UNESCAPE.sub(lambda m: _UNESCAPES[m.group(0)], text.replace(SEPARATOR, ""))


def escape_attribute(text: str) -> str:
    """Text for inside a double-quoted attribute: neutralised, &, <, > and " escaped; line breaks become
    spaces."""
    return neutralise(" ".join(text.split())).translate(_ATTRIBUTE)


@dataclass(frozen=True, slots=True)
class Markup:
    """Prompt text the program wrote (rules, labels, its own tags), or data already escaped here: sent as it
    is. Every other text given to the builder is a str and is escaped as data."""

    text: str


Part = Markup | str


def compose(*parts: Part) -> Markup:
    """The parts in order: Markup as it is, str escaped as data."""
    return Markup("".join(part.text if isinstance(part, Markup) else escape_text(part) for part in parts))


def element(name: str, text: str, *, block: bool = False, **attributes: str) -> Markup:
    """<name a="..">escaped text</name>; block puts the text on its own lines."""
    attrs = "".join(f' {key}="{escape_attribute(value)}"' for key, value in attributes.items())
    body = escape_text(text)
    return Markup(f"<{name}{attrs}>\n{body}\n</{name}>" if block else f"<{name}{attrs}>{body}</{name}>")


def _neutralised(value: Any) -> Any:
    if isinstance(value, str):
        return neutralise(value)
    if isinstance(value, dict):
        return {_neutralised(key): _neutralised(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_neutralised(item) for item in value]
    return value


def json_data(value: Any) -> Markup:
    """JSON text that cannot contain a tag or a control token: every string neutralised, < and & as \\u
    escapes (json.loads reads the same value, separators aside)."""
    return Markup(json.dumps(_neutralised(value), ensure_ascii=False).translate(_JSON))


def message(role: Literal["system", "user", "assistant"], *parts: Part, budget: int | None = None) -> Message:
    """One message of a prompt from its parts (str escaped as data), clipped to budget tokens when given."""
    content = compose(*parts).text
    return Message(role, content if budget is None else clip(content, budget))


def turn_messages(question: str, answer: str) -> tuple[Message, Message]:
    """An earlier turn replayed as history: the question as a user message and the stored answer as an
    assistant message, both escaped as data (a stored answer shows its escapes read back)."""
    return message("user", question), message("assistant", answer)


def prompt(
    rules: Markup,
    *user: Part,
    history: Sequence[Message] = (),
    rules_budget: int | None = None,
    user_budget: int | None = None,
) -> list[Message]:
    """A role's prompt: its rules as the system message, the history messages (built here), then one user
    message from the parts (str escaped as data)."""
    return [
        message("system", rules, budget=rules_budget),
        *history,
        message("user", *user, budget=user_budget),
    ]


def holds_escapes(messages: Sequence[Message]) -> bool:
    """Whether built messages carry an escape: every "&" in them is one, since data's own & is written
    &amp; (and the program's labels and tags hold none)."""
    return any("&" in m.content for m in messages)
