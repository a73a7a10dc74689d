"""ChatModel over openai.AsyncOpenAI for any OpenAI-compatible server (OpenAI, vLLM, llama.cpp, Ollama...).

Every call streams, also the auxiliary roles' complete(): a slow but steady CPU model is then judged by the
silence between chunks (`timeout`), with a separate allowance for the first token (`first_token_timeout`,
which covers prompt processing), instead of one wall-clock limit that cuts long answers off. A role's
`deadline` bounds a call across all its retries: complete() must finish within it; stream() must show its
first text within it (once an answer flows, only silence stops it). A stream that ends without a
finish_reason was cut off and is a failure, never a complete answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from typing import Any, Literal

import openai

from adapters.models.context_window import fitted_max_tokens, probe_context_window
from adapters.models.openai_retry import (
    RETRIED,
    Backoff,
    Retrier,
    StreamInterrupted,
    describe,
    is_transient,
    make_client,
    to_core_error,
)
from adapters.models.output_checks import answer_loop, extract_json, repetition_loop
from adapters.models.think_filter import ThinkFilter
from core.budget import count_tokens, message_tokens
from core.errors import ModelOutputInvalid, ModelTruncated, ModelUnavailable
from core.models import Completion, Message, Usage

log = logging.getLogger(__name__)

# Sent through extra_body when thinking is disabled: vLLM / llama.cpp / Qwen chat templates read
# chat_template_kwargs; DeepSeek / GLM / Doubao-style APIs read thinking.type
# (docs/design.md#auxiliary-model-calls).
THINKING_OFF: dict[str, Any] = {
    "chat_template_kwargs": {"enable_thinking": False},
    "thinking": {"type": "disabled"},
}
JsonMode = Literal["json_schema", "json_object", "text"]
NEXT_JSON_MODE: dict[JsonMode, JsonMode] = {"json_schema": "json_object", "json_object": "text"}
# Below this many tokens of room an answer is not worth asking for: the call fails (the fallback answers).
MIN_REPLY_TOKENS = 48
_SCHEMA_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def rejects_response_format(exc: BaseException) -> bool:
    """Whether the server refused the response_format itself (llama.cpp: 400, older builds 500; some 422)."""
    if not isinstance(exc, openai.APIStatusError):
        return False
    if exc.status_code not in (400, 422) and exc.status_code < 500:
        return False
    text = f"{exc.message} {exc.body}".lower()
    return any(word in text for word in ("response_format", "json_schema", "json_object", "response format"))


def _usage_of(raw: Any) -> Usage | None:
    if raw is None:
        return None
    return Usage(int(getattr(raw, "prompt_tokens", 0) or 0), int(getattr(raw, "completion_tokens", 0) or 0))


def _estimate_usage(messages: Sequence[Message], text: str) -> Usage:
    """Token counts when the server reports none (cl100k estimate)."""
    return Usage(sum(count_tokens(m.content) for m in messages), count_tokens(text))


def _prompt_tokens(wire: Sequence[dict[str, str]]) -> int:
    return message_tokens(m["content"] for m in wire)


def _without_loop(text: str, unit: str) -> str:
    """text up to one copy of its trailing loop: the loop's first period (plus the sentence mark after it)."""
    kept = text.rstrip()
    period = len(unit)
    start = len(kept) - period
    while start > 0 and kept[start - 1] == kept[start - 1 + period]:
        start -= 1
    end = start + period
    if kept[end : end + 1] in tuple("。！？.!?;；"):
        end += 1
    return kept[:end]


def _content_type(stream: Any) -> str:
    """The Content-Type of a stream's HTTP response ("" when unknown)."""
    headers = getattr(getattr(stream, "response", None), "headers", None)
    return str(headers.get("content-type", "")) if headers is not None else ""


def _without_title(json_schema: dict[str, Any]) -> dict[str, Any]:
    """The schema as sent: its title becomes the response format's name instead."""
    return {key: value for key, value in json_schema.items() if key != "title"}


def _schema_name(json_schema: dict[str, Any]) -> str:
    raw = str(json_schema.get("title") or "result")
    return "".join(c if c in _SCHEMA_NAME_CHARS else "_" for c in raw)[:64] or "result"


class _Stalled(StreamInterrupted):
    """No chunk within the allowed silence: retried like a timeout while nothing has been shown."""


class _CutOff(StreamInterrupted):
    """The stream ended without a finish_reason (connection cut, no [DONE]): retried while nothing was shown."""

    def __init__(self, characters: int) -> None:
        super().__init__(f"the stream ended without a finish_reason after {characters} characters")


class _StreamReader:
    """Accumulates one streamed completion: visible text (thinking removed), finish reason, usage."""

    def __init__(self) -> None:
        self.filter = ThinkFilter()
        self.parts: list[str] = []
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.model = ""
        self.received_content = False
        self.chunks = 0

    @property
    def text(self) -> str:
        return "".join(self.parts)

    def _keep(self, piece: str) -> str:
        if piece:
            self.parts.append(piece)
        return piece

    def feed(self, chunk: Any) -> str:
        """The visible text this chunk adds (reasoning fields are never read)."""
        self.chunks += 1
        self.usage = _usage_of(getattr(chunk, "usage", None)) or self.usage
        self.model = getattr(chunk, "model", "") or self.model
        visible = ""
        for choice in getattr(chunk, "choices", None) or []:
            if getattr(choice, "index", 0) != 0:
                continue
            delta = getattr(choice, "delta", None)
            content = getattr(delta, "content", None)
            if content or getattr(delta, "reasoning_content", None):
                self.received_content = True
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
        first_token_timeout: float = 90.0,
        deadline: float | None = None,
        context_tokens: int | None = None,
        retries: int = 3,
        disable_thinking: bool = True,
        backoff: Backoff = Backoff(),
        client: openai.AsyncOpenAI | None = None,
    ) -> None:
        self._model = model
        self._base_url = base_url
        self._api_key = api_key
        self._retries = retries
        self._backoff = backoff
        self._timeout = timeout
        self._first_token_timeout = first_token_timeout
        self._deadline = deadline
        self._configured_window = context_tokens
        self._window: int | None = None
        self._window_known = False
        self._window_lock = asyncio.Lock()
        self._owns_client = client is None
        # Our own timeouts govern; the transport's read timeout only has to outlast the longest of them.
        transport = openai.Timeout(max(timeout, first_token_timeout) + 5.0, connect=min(timeout, 10.0))
        self._client = make_client(client, base_url=base_url, api_key=api_key, timeout=transport)
        self._json_mode: JsonMode = "json_schema"
        self._thinking_hints = disable_thinking

    @property
    def name(self) -> str:
        """The model name sent with every request."""
        return self._model

    @property
    def json_mode(self) -> JsonMode:
        """The JSON mode in use: json_schema, then json_object, then plain text, each after a rejection."""
        return self._json_mode

    @property
    def sends_thinking_hints(self) -> bool:
        """Whether requests carry the thinking-off hints (False once the server rejected them)."""
        return self._thinking_hints

    async def aclose(self) -> None:
        """Close the HTTP client if this instance created it."""
        if self._owns_client:
            await self._client.close()

    async def context_window(self) -> int | None:
        """The server's context window (probed once: /props, /v1/models), else the configured one."""
        async with self._window_lock:
            if not self._window_known:
                probed = None
                if self._base_url:
                    probed = await probe_context_window(
                        self._base_url, model=self._model, api_key=self._api_key
                    )
                self._window = probed or self._configured_window
                self._window_known = True
                log.info("model %s: context window %s", self._model, self._window or "unknown")
        return self._window

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float = 0.0,
        json_schema: dict[str, Any] | None = None,
    ) -> Completion:
        """One whole completion (streamed underneath), within the deadline.

        Raises ModelUnavailable (also past the deadline), ModelTruncated (finish_reason length), or
        ModelOutputInvalid (empty, a repetition loop, or no JSON when a schema was asked for).
        """
        label = f"chat completion ({self._model})"
        final: Completion | None = None

        def check(text: str) -> None:
            unit = repetition_loop(text)
            if unit is not None:
                raise ModelOutputInvalid(f"{label}: repetition loop ({unit[:20]!r} repeated)")

        try:
            async with asyncio.timeout(self._deadline):
                stream = self._stream(
                    messages, max_tokens, temperature, json_schema, label, retry_after_text=True, check=check
                )
                async with contextlib.aclosing(stream) as items:
                    async for item in items:
                        if isinstance(item, Completion):
                            final = item
        except TimeoutError as exc:
            raise ModelUnavailable(
                f"{label}: no complete reply within the {self._deadline:g} s deadline"
            ) from exc
        if final is None:  # pragma: no cover - _stream always ends with a Completion or raises
            raise ModelOutputInvalid(f"{label}: the stream ended without a result")
        if final.finish_reason == "length":
            raise ModelTruncated(f"{label}: finish_reason=length at max_tokens={max_tokens}")
        if not final.text.strip():
            raise ModelOutputInvalid(f"{label}: empty content")
        if json_schema is None:
            return final
        document = extract_json(final.text)
        if document is None:
            raise ModelOutputInvalid(f"{label}: content is not JSON: {final.text.strip()[:200]!r}")
        return Completion(
            text=document, finish_reason=final.finish_reason, usage=final.usage, model=final.model
        )

    async def stream(
        self, messages: Sequence[Message], *, max_tokens: int, temperature: float = 0.2
    ) -> AsyncIterator[str | Completion]:
        """Yields text deltas, then one final Completion (finish_reason "length" is not an error here).

        Failures are retried only while nothing has been yielded; once text has gone out, a failure (also a
        stream cut off without a finish_reason) raises ModelUnavailable. The deadline bounds the wait for
        the first text across retries.
        """
        label = f"chat stream ({self._model})"
        text = ""
        unit: str | None = None
        async with contextlib.aclosing(
            self._stream(messages, max_tokens, temperature, None, label, retry_after_text=False)
        ) as items:
            async for item in items:
                if isinstance(item, Completion):
                    yield item
                    return
                yield item
                text += item
                unit = answer_loop(text)
                if unit is not None:
                    break
        if unit is None:  # pragma: no cover - _stream always ends with a Completion or raises
            return
        # A loop (seen: the 1.5B repeating one sentence to the 1,500-token cap, minutes on a CPU) stops the
        # answer: what came before it is kept, with one copy of the repeated unit, like a truncated answer.
        log.warning("%s: repetition loop (%r repeated); answer stopped", label, unit[:20])
        kept = _without_loop(text, unit)
        usage = await asyncio.to_thread(_estimate_usage, messages, text)
        yield Completion(text=kept, finish_reason="repetition", usage=usage, model=self._model)

    async def _stream(
        self,
        messages: Sequence[Message],
        max_tokens: int,
        temperature: float,
        json_schema: dict[str, Any] | None,
        label: str,
        *,
        retry_after_text: bool,
        check: Callable[[str], None] | None = None,
    ) -> AsyncGenerator[str | Completion, None]:
        """The attempts of one call. A failure after text was yielded is retried only when retry_after_text
        (complete(): nothing was shown); `check` sees the text so far after every chunk."""
        loop = asyncio.get_running_loop()
        give_up_at = None if self._deadline is None else loop.time() + self._deadline
        retrier = self._retrier(label)
        while True:
            reader = _StreamReader()
            try:
                async for piece in self._attempt(
                    messages, max_tokens, temperature, json_schema, retrier, reader, give_up_at, check
                ):
                    yield piece
                break
            except (*RETRIED, ValueError) as exc:
                if reader.parts and not retry_after_text:
                    detail = f"{label}: broke after {len(reader.text)} characters: {describe(exc)}"
                    raise ModelUnavailable(detail) from exc
                past_deadline = give_up_at is not None and loop.time() >= give_up_at
                if past_deadline or isinstance(exc, ValueError):
                    raise to_core_error(exc, label=label) from exc
                if not await retrier.wait_before_retry(exc):
                    raise to_core_error(exc, label=label) from exc
        tail = reader.finish()
        if tail:
            yield tail
        if not reader.text.strip() and reader.finish_reason != "length":
            raise ModelOutputInvalid(f"{label}: empty content (finish_reason={reader.finish_reason})")
        usage = reader.usage
        if usage is None:
            usage = await asyncio.to_thread(_estimate_usage, messages, reader.text)
        yield Completion(
            text=reader.text,
            finish_reason=reader.finish_reason,
            usage=usage,
            model=reader.model or self._model,
        )

    async def _attempt(
        self,
        messages: Sequence[Message],
        max_tokens: int,
        temperature: float,
        json_schema: dict[str, Any] | None,
        retrier: Retrier,
        reader: _StreamReader,
        give_up_at: float | None,
        check: Callable[[str], None] | None,
    ) -> AsyncGenerator[str, None]:
        """One streamed request: first chunk with text within first_token_timeout, then none silent longer
        than timeout; raises _CutOff when the stream ends without a finish_reason."""
        loop = asyncio.get_running_loop()
        response, sent_at = await self._create(
            messages, max_tokens, temperature, json_schema, retrier, give_up_at
        )
        first_token_by = sent_at + self._first_token_timeout
        if give_up_at is not None:
            first_token_by = min(first_token_by, give_up_at)

        def allowance() -> tuple[float, str]:
            if reader.received_content:
                return self._timeout, f"no data for {self._timeout:g} s"
            return max(0.0, first_token_by - loop.time()), "no first token in time"

        try:
            chunks = response.__aiter__()
            while True:
                seconds, what = allowance()
                try:
                    chunk = await asyncio.wait_for(chunks.__anext__(), timeout=seconds)
                except StopAsyncIteration:
                    break
                except TimeoutError as exc:
                    raise _Stalled(what) from exc
                piece = reader.feed(chunk)
                if piece:
                    if check is not None:
                        check(reader.text)
                    yield piece
        finally:
            await response.close()
        if reader.finish_reason is None:
            kind = _content_type(response)
            if not reader.chunks and kind and "event-stream" not in kind:
                raise ModelOutputInvalid(f"{retrier.label}: the reply is not an event stream ({kind})")
            raise _CutOff(len(reader.text))

    def _retrier(self, label: str) -> Retrier:
        def transient(exc: BaseException) -> bool:
            return is_transient(exc) and not rejects_response_format(exc)

        return Retrier(retries=self._retries, backoff=self._backoff, label=label, transient=transient)

    async def _create(
        self,
        messages: Sequence[Message],
        max_tokens: int,
        temperature: float,
        json_schema: dict[str, Any] | None,
        retrier: Retrier,
        give_up_at: float | None,
    ) -> tuple[Any, float]:
        """Send the request, degrading json_schema -> json_object -> text and dropping thinking hints on
        rejection; (the stream, when its request was sent). Each attempt's response headers must arrive
        within the first-token allowance (and before the deadline)."""
        loop = asyncio.get_running_loop()
        hints = self._thinking_hints
        sent_at = loop.time()
        while True:
            json_mode: JsonMode | None = self._json_mode if json_schema is not None else None
            wire = _wire_messages(messages, json_schema, json_mode)
            fitted = await self._fit(wire, max_tokens)
            params = self._params(wire, fitted, temperature, json_schema, json_mode, hints)
            create = functools.partial(self._client.chat.completions.create, **params)

            async def attempt(create: Any = create) -> Any:
                nonlocal sent_at
                sent_at = loop.time()
                allowed = self._first_token_timeout
                if give_up_at is not None:
                    allowed = max(0.0, min(allowed, give_up_at - sent_at))
                try:
                    return await asyncio.wait_for(create(), timeout=allowed)
                except TimeoutError as exc:
                    raise _Stalled("no first token in time (no response headers)") from exc

            try:
                response = await retrier.run(attempt)
            except openai.APIStatusError as exc:
                if json_mode is not None and json_mode in NEXT_JSON_MODE and rejects_response_format(exc):
                    downgraded = NEXT_JSON_MODE[json_mode]
                    log.warning(
                        "%s: %s rejected (%s); using %s", retrier.label, json_mode, describe(exc), downgraded
                    )
                    self._json_mode = downgraded
                    continue
                if hints and exc.status_code in (400, 422):
                    log.warning("%s: %s; retrying without thinking hints", retrier.label, describe(exc))
                    hints = False
                    continue
                raise
            if hints != self._thinking_hints:
                log.warning("%s: the server refuses thinking hints; no longer sending them", retrier.label)
                self._thinking_hints = False
            return response, sent_at

    async def _fit(self, wire: list[dict[str, str]], max_tokens: int) -> int:
        """max_tokens lowered to the room the context window leaves; ModelUnavailable when none is left."""
        window = await self.context_window()
        if window is None:
            return max_tokens
        prompt = await asyncio.to_thread(_prompt_tokens, wire)
        fitted = fitted_max_tokens(prompt, max_tokens, window)
        if fitted < min(MIN_REPLY_TOKENS, max_tokens):
            raise ModelUnavailable(
                f"chat ({self._model}): a prompt of about {prompt} tokens leaves no room for the reply "
                f"in the {window}-token context window"
            )
        if fitted < max_tokens:
            log.info(
                "model %s: max_tokens %d -> %d to fit the %d-token window",
                self._model,
                max_tokens,
                fitted,
                window,
            )
        return fitted

    def _params(
        self,
        wire: list[dict[str, str]],
        max_tokens: int,
        temperature: float,
        json_schema: dict[str, Any] | None,
        json_mode: JsonMode | None,
        hints: bool,
    ) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self._model, "max_tokens": max_tokens, "temperature": temperature}
        if json_schema is not None and json_mode == "json_schema":
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": {
                    "name": _schema_name(json_schema),
                    "schema": _without_title(json_schema),
                    "strict": True,
                },
            }
        elif json_schema is not None and json_mode == "json_object":
            params["response_format"] = {"type": "json_object"}
        if hints:
            params["extra_body"] = {**THINKING_OFF}
        params["stream"] = True
        params["stream_options"] = {"include_usage": True}
        params["messages"] = wire
        return params


def _wire_messages(
    messages: Sequence[Message], json_schema: dict[str, Any] | None, json_mode: JsonMode | None
) -> list[dict[str, str]]:
    """The messages as sent; without json_schema support the schema goes into the system message (this
    also satisfies OpenAI's rule that json_object requests mention JSON)."""
    wire = [{"role": m.role, "content": m.content} for m in messages]
    if json_schema is None or json_mode == "json_schema":
        return wire
    schema = json.dumps(json_schema, ensure_ascii=False)
    hint = f"Reply with only one JSON object, no other text, that matches this JSON schema:\n{schema}"
    if wire and wire[0]["role"] == "system":  # some chat templates allow one leading system message
        wire[0] = {"role": "system", "content": f"{wire[0]['content']}\n\n{hint}"}
    else:
        wire.insert(0, {"role": "system", "content": hint})
    return wire
