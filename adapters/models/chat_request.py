"""One chat call as the adapter sends it: the request object, its JSON mode, and its wire form.

A ChatRequest is what complete() or stream() was asked; every attempt of that call reads it. How it goes
on the wire depends on what the server accepts, learnt per model: the JSON mode falls back json_schema ->
json_object -> text (the schema then goes into the system message), and the thinking-off hints are
dropped by a server that refuses unknown parameters. Pure functions, no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from openai.types.chat import ChatCompletionMessageParam
from openai.types.chat.completion_create_params import ResponseFormat

from core.models import Message

# Sent through extra_body when thinking is disabled: vLLM / llama.cpp / Qwen chat templates read
# chat_template_kwargs; DeepSeek / GLM / Doubao-style APIs read thinking.type.
THINKING_OFF: dict[str, Any] = {
    "chat_template_kwargs": {"enable_thinking": False},
    "thinking": {"type": "disabled"},
}
JsonMode = Literal["json_schema", "json_object", "text"]
NEXT_JSON_MODE: dict[JsonMode, JsonMode] = {"json_schema": "json_object", "json_object": "text"}
_SCHEMA_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One logical call; its attempts (retries, JSON-mode fallbacks) all send this.

    shows_text: stream() hands text out as it arrives, so a failure after the first text cannot be retried
    (complete() shows nothing until the end). deadline_at: the event-loop time by which the reply (complete)
    or its first text (stream) must have come, across all attempts; None: no deadline.
    """

    messages: tuple[Message, ...]
    max_tokens: int
    temperature: float
    label: str
    json_schema: Mapping[str, Any] | None = None
    shows_text: bool = False
    deadline_at: float | None = None

    def json_mode(self, server_mode: JsonMode) -> JsonMode | None:
        """The JSON mode this request is sent with: the server's, or None when no JSON was asked for."""
        return server_mode if self.json_schema is not None else None

    def wire_messages(self, json_mode: JsonMode | None) -> list[ChatCompletionMessageParam]:
        """The messages as sent; without json_schema support the schema goes into the system message (this
        also satisfies OpenAI's rule that json_object requests mention JSON)."""
        wire = [(m.role, m.content) for m in self.messages]
        if self.json_schema is not None and json_mode != "json_schema":
            schema = json.dumps(self.json_schema, ensure_ascii=False)
            hint = f"Reply with only one JSON object, no other text, that matches this JSON schema:\n{schema}"
            if wire and wire[0][0] == "system":  # some chat templates allow one leading system message
                wire[0] = ("system", f"{wire[0][1]}\n\n{hint}")
            else:
                wire.insert(0, ("system", hint))
        return [_message_param(role, content) for role, content in wire]

    def response_format(self, json_mode: JsonMode | None) -> ResponseFormat | None:
        """The response_format for the JSON mode (json_schema strict, named by the schema's title)."""
        if self.json_schema is None or json_mode == "text" or json_mode is None:
            return None
        if json_mode == "json_object":
            return {"type": "json_object"}
        return {
            "type": "json_schema",
            "json_schema": {
                "name": _schema_name(self.json_schema),
                "schema": {key: value for key, value in self.json_schema.items() if key != "title"},
                "strict": True,
            },
        }


def _message_param(role: str, content: str) -> ChatCompletionMessageParam:
    if role == "system":
        return {"role": "system", "content": content}
    if role == "assistant":
        return {"role": "assistant", "content": content}
    return {"role": "user", "content": content}


def _schema_name(json_schema: Mapping[str, Any]) -> str:
    raw = str(json_schema.get("title") or "result")
    return "".join(c if c in _SCHEMA_NAME_CHARS else "_" for c in raw)[:64] or "result"
