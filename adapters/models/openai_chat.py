"""ChatModel over openai.AsyncOpenAI for any OpenAI-compatible server (OpenAI, vLLM, llama.cpp, Ollama...)."""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import re
from collections.abc import AsyncIterator, Sequence
from typing import Any, Literal

import openai

from adapters.models.openai_retry import Backoff, Retrier, describe, is_transient, make_client, to_core_error
from adapters.models.think_filter import ThinkFilter, strip_thinking
from core.budget import count_tokens
from core.errors import ModelOutputInvalid, ModelTruncated, ModelUnavailable
from core.models import Completion, Message, Usage

log = logging.getLogger(__name__)

# Sent through extra_body when thinking is disabled: vLLM / llama.cpp / Qwen chat templates read
# chat_template_kwargs; DeepSeek / GLM / Doubao-style APIs read thinking.type (seed 000).
THINKING_OFF: dict[str, Any] = {
    "chat_template_kwargs": {"enable_thinking": False},
    "thinking": {"type": "disabled"},
}
JsonMode = Literal["json_schema", "json_object"]
_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n?(.*?)\n?```$", re.DOTALL)
_SCHEMA_NAME = re.compile(r"[^a-zA-Z0-9_-]+")


def rejects_response_format(exc: BaseException) -> bool:
    """Whether the server refused the response_format itself (llama.cpp: 400, older builds 500)."""
    if not isinstance(exc, openai.APIStatusError):
        return False
    if exc.status_code not in (400, 422) and exc.status_code < 500:
        return False
    text = f"{exc.message} {exc.body}".lower()
    return any(word in text for word in ("response_format", "json_schema", "response format"))


def _json_text(text: str, *, label: str) -> str:
    """The JSON document in text (a Markdown code fence is removed); ModelOutputInvalid if not JSON."""
    stripped = text.strip()
    fenced = _FENCE.match(stripped)
    if fenced:
        stripped = fenced.group(1).strip()
    try:
        json.loads(stripped)
    except ValueError as exc:
        raise ModelOutputInvalid(f"{label}: content is not JSON: {stripped[:200]!r}") from exc
    return stripped


def _usage_of(raw: Any) -> Usage | None:
    if raw is None:
        return None
    return Usage(int(getattr(raw, "prompt_tokens", 0) or 0), int(getattr(raw, "completion_tokens", 0) or 0))


def _estimate_usage(messages: Sequence[Message], text: str) -> Usage:
    """Token counts when the server reports none (cl100k estimate)."""
    return Usage(sum(count_tokens(m.content) for m in messages), count_tokens(text))


class _StreamReader:
    """Accumulates one streamed completion: visible text (thinking removed), finish reason, usage."""

    def __init__(self) -> None:
        self.filter = ThinkFilter()
        self.parts: list[str] = []
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.model = ""

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def _keep(self, piece: str) -> str:
        if piece:
            self.parts.append(piece)
        return piece

    def feed(self, chunk: Any) -> str:
        """The visible text this chunk adds (reasoning fields are never read)."""
        self.usage = _usage_of(getattr(chunk, "usage", None)) or self.usage
        self.model = getattr(chunk, "model", "") or self.model
        visible = ""
        for choice in getattr(chunk, "choices", None) or []:
            if getattr(choice, "index", 0) != 0:
                continue
            content = getattr(getattr(choice, "delta", None), "content", None)
            if content:
                visible += self.filter.feed(content)
            if getattr(choice, "finish_reason", None):
                self.finish_reason = choice.finish_reason
        return self._keep(visible)

    def finish(self) -> str:
        return self._keep(self.filter.flush())


class OpenAIChatModel:
    """core.ports.ChatModel over the chat-completions API, with our own retry loop (SDK retries off)."""

    def __init__(
        self,
        *,
        base_url: str | None,
        api_key: str | None = None,
        model: str,
        timeout: float = 60.0,
        retries: int = 3,
        disable_thinking: bool = True,
        backoff: Backoff = Backoff(),
        client: openai.AsyncOpenAI | None = None,
    ) -> None:
        self._model = model
        self._retries = retries
        self._backoff = backoff
        self._owns_client = client is None
        self._client = make_client(client, base_url=base_url, api_key=api_key, timeout=timeout)
        self._json_mode: JsonMode = "json_schema"
        self._thinking_hints = disable_thinking

    @property
    def name(self) -> str:
        """The model name sent with every request."""
        return self._model

    @property
    def json_mode(self) -> JsonMode:
        """The JSON mode in use: json_schema until the server rejects it, then json_object for good."""
        return self._json_mode

    @property
    def sends_thinking_hints(self) -> bool:
        """Whether requests carry the thinking-off hints (False once the server rejected them)."""
        return self._thinking_hints

    async def aclose(self) -> None:
        """Close the HTTP client if this instance created it."""
        if self._owns_client:
            await self._client.close()

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float = 0.0,
        json_schema: dict[str, Any] | None = None,
    ) -> Completion:
        """One non-streaming completion. Raises ModelUnavailable / ModelTruncated / ModelOutputInvalid."""
        retrier = self._retrier(f"chat completion ({self._model})")
        response = await self._create(
            messages, max_tokens=max_tokens, temperature=temperature, json_schema=json_schema, retrier=retrier
        )
        choices = getattr(response, "choices", None) or []
        if not choices:
            raise ModelOutputInvalid(f"{retrier.label}: the response has no choices")
        choice = choices[0]
        finish_reason = getattr(choice, "finish_reason", None)
        if finish_reason == "length":
            raise ModelTruncated(f"{retrier.label}: finish_reason=length at max_tokens={max_tokens}")
        text = strip_thinking(getattr(getattr(choice, "message", None), "content", None) or "")
        if not text.strip():
            raise ModelOutputInvalid(f"{retrier.label}: empty content")
        if json_schema is not None:
            text = _json_text(text, label=retrier.label)
        usage = _usage_of(getattr(response, "usage", None))
        if usage is None:
            usage = await asyncio.to_thread(_estimate_usage, messages, text)
        model = getattr(response, "model", None) or self._model
        return Completion(text=text, finish_reason=finish_reason, usage=usage, model=model)

    async def stream(
        self, messages: Sequence[Message], *, max_tokens: int, temperature: float = 0.2
    ) -> AsyncIterator[str | Completion]:
        """Yields text deltas, then one final Completion (finish_reason "length" is not an error here).

        Transient failures are retried only while nothing has been yielded; once text has gone out, a
        failure raises ModelUnavailable.
        """
        retrier = self._retrier(f"chat stream ({self._model})")
        while True:
            response = await self._create(
                messages, max_tokens=max_tokens, temperature=temperature, retrier=retrier, stream=True
            )
            reader = _StreamReader()
            try:
                async for chunk in response:
                    piece = reader.feed(chunk)
                    if piece:
                        yield piece
                break
            except (openai.OpenAIError, ValueError) as exc:
                if reader.parts:
                    detail = f"{retrier.label}: broke after {len(reader.text)} characters: {describe(exc)}"
                    raise ModelUnavailable(detail) from exc
                if not isinstance(exc, openai.OpenAIError) or not await retrier.wait_before_retry(exc):
                    raise to_core_error(exc, label=retrier.label) from exc
            finally:
                await response.close()
        tail = reader.finish()
        if tail:
            yield tail
        if not reader.text.strip() and reader.finish_reason != "length":
            raise ModelOutputInvalid(f"{retrier.label}: empty content (finish_reason={reader.finish_reason})")
        usage = reader.usage
        if usage is None:
            usage = await asyncio.to_thread(_estimate_usage, messages, reader.text)
        yield Completion(
            text=reader.text,
            finish_reason=reader.finish_reason,
            usage=usage,
            model=reader.model or self._model,
        )

    def _retrier(self, label: str) -> Retrier:
        def transient(exc: BaseException) -> bool:
            return is_transient(exc) and not rejects_response_format(exc)

        return Retrier(retries=self._retries, backoff=self._backoff, label=label, transient=transient)

    async def _create(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        retrier: Retrier,
        json_schema: dict[str, Any] | None = None,
        stream: bool = False,
    ) -> Any:
        """Send the request, degrading json_schema -> json_object and dropping thinking hints on rejection."""
        json_mode: JsonMode | None = self._json_mode if json_schema is not None else None
        hints = self._thinking_hints
        while True:
            params = self._params(messages, max_tokens, temperature, json_schema, json_mode, hints, stream)
            create = functools.partial(self._client.chat.completions.create, **params)
            try:
                response = await retrier.run(create)
            except openai.APIStatusError as exc:
                if json_mode == "json_schema" and rejects_response_format(exc):
                    log.warning(
                        "%s: json_schema rejected (%s); using json_object", retrier.label, describe(exc)
                    )
                    json_mode = self._json_mode = "json_object"
                    continue
                if hints and exc.status_code in (400, 422):
                    log.warning("%s: %s; retrying without thinking hints", retrier.label, describe(exc))
                    hints = False
                    continue
                raise to_core_error(exc, label=retrier.label) from exc
            except (openai.OpenAIError, ValueError) as exc:
                raise to_core_error(exc, label=retrier.label) from exc
            if hints != self._thinking_hints:
                log.warning("%s: the server refuses thinking hints; no longer sending them", retrier.label)
                self._thinking_hints = False
            return response

    def _params(
        self,
        messages: Sequence[Message],
        max_tokens: int,
        temperature: float,
        json_schema: dict[str, Any] | None,
        json_mode: JsonMode | None,
        hints: bool,
        stream: bool,
    ) -> dict[str, Any]:
        wire = [{"role": m.role, "content": m.content} for m in messages]
        params: dict[str, Any] = {"model": self._model, "max_tokens": max_tokens, "temperature": temperature}
        if json_schema is not None and json_mode == "json_schema":
            name = _SCHEMA_NAME.sub("_", str(json_schema.get("title") or "result"))[:64] or "result"
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": json_schema, "strict": True},
            }
        elif json_schema is not None:
            # json_object cannot carry the schema, so the model reads it (this also satisfies OpenAI's
            # rule that json_object requests mention JSON).
            schema = json.dumps(json_schema, ensure_ascii=False)
            hint = f"Reply with one JSON object that matches this JSON schema:\n{schema}"
            if wire and wire[0]["role"] == "system":  # some chat templates allow one leading system message
                wire[0] = {"role": "system", "content": f"{wire[0]['content']}\n\n{hint}"}
            else:
                wire.insert(0, {"role": "system", "content": hint})
            params["response_format"] = {"type": "json_object"}
        if hints:
            params["extra_body"] = {**THINKING_OFF}
        if stream:
            params["stream"] = True
            params["stream_options"] = {"include_usage": True}
        params["messages"] = wire
        return params
