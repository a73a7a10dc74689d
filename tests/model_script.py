"""Scripted replies and recorded requests of the OpenAI-compatible test server (tests/model_server.py)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Endpoint = Literal["chat", "embeddings"]

# Keys of a chat-completions body that the OpenAI API documents; anything else is a vendor extra
# (e.g. chat_template_kwargs, thinking) and is what a strict server rejects.
STANDARD_CHAT_KEYS = frozenset(
    (
        "model messages temperature max_tokens max_completion_tokens stream stream_options response_format "
        "top_p n stop presence_penalty frequency_penalty seed tools tool_choice user logprobs top_logprobs "
        "logit_bias parallel_tool_calls reasoning_effort metadata store service_tier modalities prediction "
        "audio web_search_options verbosity prompt_cache_key safety_identifier"
    ).split()
)

# What llama.cpp's server answers when it does not accept response_format.type == "json_schema"
# (server-common.cpp: std::invalid_argument -> 400 invalid_request_error; older builds and
# ik_llama.cpp threw std::runtime_error -> 500 server_error with the same message).
LLAMA_CPP_JSON_SCHEMA_MESSAGE = (
    'response_format type must be one of "text" or "json_object", but got: json_schema'
)


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted answer to one request. Build it with the class methods; fields combine freely.

    For /v1/embeddings only the transport fields apply (status, error, headers, delay, hang, raw_body);
    a plain reply there means "compute the vectors as usual".
    """

    content: str = ""
    finish_reason: str = "stop"
    chunks: int = 1  # streamed requests: the content is split into this many deltas
    chunk_delay: float = 0.0  # seconds between two streamed deltas
    delay: float = 0.0  # seconds before the response starts (added to the server-wide delay)
    status: int = 200
    error: str = ""  # message of the OpenAI-style error body sent with a status >= 400
    error_type: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    hang: bool = False  # never answer (until the server stops): the client's timeout must fire
    raw_body: str | None = None  # sent verbatim as an application/json body (e.g. broken JSON)
    reasoning: str = ""  # sent as reasoning_content beside the content, as reasoning servers do
    disconnect_after: int | None = None  # streamed: drop the connection after this many deltas
    omit_finish: bool = False  # streamed: end the body cleanly with no finish_reason chunk and no [DONE]
    usage: tuple[int, int] | None = None  # (prompt, completion) tokens; default: counted

    @classmethod
    def text(
        cls,
        content: str,
        *,
        chunks: int = 1,
        chunk_delay: float = 0.0,
        delay: float = 0.0,
        reasoning: str = "",
        usage: tuple[int, int] | None = None,
    ) -> Reply:
        """A normal answer; streamed requests receive it in `chunks` deltas."""
        return cls(
            content=content,
            chunks=chunks,
            chunk_delay=chunk_delay,
            delay=delay,
            reasoning=reasoning,
            usage=usage,
        )

    @classmethod
    def truncated(cls, content: str = "这是一段被截断的", *, chunks: int = 1) -> Reply:
        """An answer cut off by max_tokens: finish_reason "length"."""
        return cls(content=content, finish_reason="length", chunks=chunks)

    @classmethod
    def failure(
        cls,
        status: int,
        message: str = "",
        *,
        retry_after: str | float | None = None,
        error_type: str = "",
    ) -> Reply:
        """An HTTP error with an OpenAI-style body, optionally with a Retry-After header."""
        headers = () if retry_after is None else (("Retry-After", str(retry_after)),)
        return cls(
            status=status,
            error=message or f"scripted error {status}",
            error_type=error_type or ("invalid_request_error" if status < 500 else "server_error"),
            headers=headers,
        )

    @classmethod
    def hanging(cls) -> Reply:
        """No answer at all until the server stops."""
        return cls(hang=True)

    @classmethod
    def invalid_json(cls, body: str = '{"id": "chatcmpl-broken", "choices": [') -> Reply:
        """A 200 response whose body is not JSON."""
        return cls(raw_body=body)

    @classmethod
    def json_schema_rejected(cls, *, status: int = 400) -> Reply:
        """llama.cpp's rejection of response_format json_schema (400 today, 500 on older builds)."""
        kind = "invalid_request_error" if status < 500 else "server_error"
        return cls(status=status, error=LLAMA_CPP_JSON_SCHEMA_MESSAGE, error_type=kind)

    @classmethod
    def unknown_parameter(cls, name: str) -> Reply:
        """OpenAI's 400 for a body key it does not know (e.g. chat_template_kwargs)."""
        return cls(
            status=400,
            error=f"Unrecognized request argument supplied: {name}",
            error_type="invalid_request_error",
        )

    @classmethod
    def disconnect(cls, content: str, *, after_chunks: int, chunks: int = 4) -> Reply:
        """A streamed answer whose connection drops after `after_chunks` deltas."""
        return cls(content=content, chunks=chunks, disconnect_after=after_chunks)

    @classmethod
    def ends_without_finish(cls, content: str, *, chunks: int = 2) -> Reply:
        """A streamed answer whose body ends cleanly after its deltas, with no finish_reason and no [DONE]
        (a proxy or server that lost the upstream mid-answer)."""
        return cls(content=content, chunks=chunks, omit_finish=True)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (for script files and the /_script/replies control endpoint)."""
        data = dataclasses.asdict(self)
        data["headers"] = [list(pair) for pair in self.headers]
        data["usage"] = list(self.usage) if self.usage else None
        return data

    @classmethod
    def from_value(cls, value: Reply | str | Mapping[str, Any]) -> Reply:
        """A Reply from a Reply, a plain text, or a dict as produced by to_dict (unknown keys rejected)."""
        if isinstance(value, Reply):
            return value
        if isinstance(value, str):
            return cls.text(value)
        data = dict(value)
        data["headers"] = tuple(tuple(pair) for pair in data.get("headers") or ())
        data["usage"] = tuple(data["usage"]) if data.get("usage") else None
        return cls(**data)


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request the server received, for assertions."""

    endpoint: Endpoint
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    received_at: float = 0.0  # time.monotonic() on arrival

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    @property
    def last_user_message(self) -> str:
        """Content of the last user message ("" if none)."""
        users = [m for m in self.messages if m.get("role") == "user"]
        return str(users[-1].get("content") or "") if users else ""

    @property
    def system_prompt(self) -> str:
        """Content of the first system message ("" if none)."""
        systems = [m for m in self.messages if m.get("role") == "system"]
        return str(systems[0].get("content") or "") if systems else ""

    @property
    def temperature(self) -> float | None:
        value = self.body.get("temperature")
        return None if value is None else float(value)

    @property
    def max_tokens(self) -> int | None:
        value = self.body.get("max_tokens", self.body.get("max_completion_tokens"))
        return None if value is None else int(value)

    @property
    def response_format(self) -> dict[str, Any] | None:
        return self.body.get("response_format")

    @property
    def stream(self) -> bool:
        return bool(self.body.get("stream"))

    @property
    def wants_usage(self) -> bool:
        """True when a streamed request asked for the final usage chunk."""
        return bool((self.body.get("stream_options") or {}).get("include_usage"))

    @property
    def extra(self) -> dict[str, Any]:
        """Body keys outside the documented OpenAI chat parameters (vendor extras)."""
        if self.endpoint != "chat":
            return {}
        return {k: v for k, v in self.body.items() if k not in STANDARD_CHAT_KEYS}

    @property
    def inputs(self) -> list[str]:
        """Embedding inputs as a list of strings (token-array inputs are rendered as text)."""
        raw = self.body.get("input")
        if raw is None:
            return []
        items = [raw] if isinstance(raw, str) or (raw and isinstance(raw[0], int)) else list(raw)
        return [item if isinstance(item, str) else " ".join(map(str, item)) for item in items]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (served by GET /_script/requests)."""
        return {"endpoint": self.endpoint, "body": self.body, "received_at": self.received_at}
