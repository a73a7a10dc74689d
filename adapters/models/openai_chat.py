"""ChatModel over openai.AsyncOpenAI for any OpenAI-compatible server (OpenAI, vLLM, llama.cpp, Ollama...).

The SDK sends, parses and retries the requests (adapters.models.openai_client). Written here, because no
library does it: every call streams, also the auxiliary roles' complete(), so a slow but steady CPU model
is judged by the silence between chunks (`timeout`), with a separate allowance for the first token
(`first_token_timeout`, which covers prompt processing and the SDK's retries of the request) instead of
one wall-clock limit that cuts long answers off. A stream that stalls or is cut after its headers is
beyond the SDK's retries: one small loop (_stream) tries it again, from the same budget of `retries`,
while nothing has been shown. A role's `deadline` bounds a call across all its retries: complete() must
finish within it; stream() must show its first text within it (once an answer flows, only silence stops
it). A stream that ends without a finish_reason was cut off and is a failure, never a complete answer.
Also here: the JSON-mode fallback for servers that refuse a response_format (adapters.models.chat_request)
and the stop of a repetition loop (adapters.models.output_checks).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import openai
from openai.types.chat import ChatCompletionChunk, ChatCompletionMessageParam

from adapters.models.chat_request import NEXT_JSON_MODE, THINKING_OFF, ChatRequest, JsonMode
from adapters.models.chat_stream import Stalled, StreamReader
from adapters.models.context_window import fitted_max_tokens, probe_context_window
from adapters.models.error_mapping import StreamInterrupted, describe, map_model_errors
from adapters.models.openai_client import make_client, mentions_response_format
from adapters.models.output_checks import answer_loop, extract_json, repetition_loop
from core.budget import count_tokens, message_tokens
from core.errors import ModelOutputInvalid, ModelTruncated, ModelUnavailable
from core.models import Completion, Message, Usage

log = logging.getLogger(__name__)

# Below this many tokens of room an answer is not worth asking for: the call fails (the fallback answers).
MIN_REPLY_TOKENS = 48
# Failures of a stream after its headers, which the SDK does not retry: a stall or cut-off, or the
# connection lost mid-body (the SDK raises APIConnectionError / APITimeoutError from the iteration).
STREAM_BROKEN = (StreamInterrupted, openai.APIConnectionError)


def rejects_response_format(exc: BaseException) -> bool:
    """Whether the server refused the response_format itself (llama.cpp: 400, older builds 500; some 422)."""
    if not isinstance(exc, openai.APIStatusError):
        return False
    if exc.status_code not in (400, 422) and exc.status_code < 500:
        return False
    return mentions_response_format(f"{exc.message} {exc.body}")


def _estimate_usage(messages: Sequence[Message], text: str) -> Usage:
    """Token counts when the server reports none (cl100k estimate)."""
    return Usage(sum(count_tokens(m.content) for m in messages), count_tokens(text))


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


@dataclass(frozen=True, slots=True)
class _Opened:
    """A stream whose headers arrived: when its request was handed to the SDK, and the SDK's retries."""

    stream: openai.AsyncStream[ChatCompletionChunk]
    sent_at: float
    retries_taken: int


class OpenAIChatModel:
    """core.ports.ChatModel over the chat-completions API; the SDK retries requests, _stream broken streams."""

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
    ) -> None:
        self._model = model
        self._base_url = base_url
        self._api_key = api_key
        self._retries = max(0, retries)
        self._timeout = timeout
        self._first_token_timeout = first_token_timeout
        self._deadline = deadline
        self._configured_window = context_tokens
        self._window: int | None = None
        self._window_known = False
        self._window_lock = asyncio.Lock()
        # Our own timeouts govern; the transport's read timeout only has to outlast the longest of them.
        transport = openai.Timeout(max(timeout, first_token_timeout) + 5.0, connect=min(timeout, 10.0))
        self._client = make_client(base_url=base_url, api_key=api_key, timeout=transport, retries=retries)
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
        """Close the HTTP client."""
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

    def _deadline_at(self) -> float | None:
        return None if self._deadline is None else asyncio.get_running_loop().time() + self._deadline

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
        request = ChatRequest(
            tuple(messages), max_tokens, temperature, label, json_schema, deadline_at=self._deadline_at()
        )
        final: Completion | None = None
        try:
            async with asyncio.timeout(self._deadline):
                async with contextlib.aclosing(self._stream(request)) as items:
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
        request = ChatRequest(
            tuple(messages), max_tokens, temperature, label, shows_text=True, deadline_at=self._deadline_at()
        )
        text = ""
        unit: str | None = None
        async with contextlib.aclosing(self._stream(request)) as items:
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

    async def _stream(self, request: ChatRequest) -> AsyncGenerator[str | Completion, None]:
        """The attempts of one call, ending with its Completion. The SDK retries a failed request; this loop
        retries a stream broken after its headers (STREAM_BROKEN) while nothing was shown, from what is left
        of the `retries` budget after the SDK's own retries. complete()'s text is checked for a repetition
        loop after every chunk (stream() checks its answer itself)."""
        loop = asyncio.get_running_loop()
        check = None if request.shows_text else _repetition_check(request.label)
        left = self._retries
        with map_model_errors(request.label):
            while True:
                reader = StreamReader(request.label)
                opened: _Opened | None = None
                try:
                    opened = await self._open(request, retries=left)
                    left -= opened.retries_taken
                    first_token_by = opened.sent_at + self._first_token_timeout
                    if request.deadline_at is not None:
                        first_token_by = min(first_token_by, request.deadline_at)
                    pieces = reader.read(
                        opened.stream, first_token_by=first_token_by, silence=self._timeout, check=check
                    )
                    async with contextlib.aclosing(pieces):  # a caller that stops early closes the stream
                        async for piece in pieces:
                            yield piece
                    break
                except STREAM_BROKEN as exc:
                    if opened is None and not isinstance(exc, StreamInterrupted):
                        raise  # the SDK already spent the budget retrying this request
                    if reader.parts and request.shows_text:
                        detail = (
                            f"{request.label}: broke after {len(reader.text)} characters: {describe(exc)}"
                        )
                        raise ModelUnavailable(detail) from exc
                    past_deadline = request.deadline_at is not None and loop.time() >= request.deadline_at
                    if left <= 0 or past_deadline:
                        raise
                    left -= 1
                    log.warning(
                        "%s: %s; retry %d/%d",
                        request.label,
                        describe(exc),
                        self._retries - left,
                        self._retries,
                    )
        tail = reader.finish()
        if tail:
            yield tail
        if not reader.text.strip() and reader.finish_reason != "length":
            raise ModelOutputInvalid(f"{request.label}: empty content (finish_reason={reader.finish_reason})")
        usage = reader.usage
        if usage is None:
            usage = await asyncio.to_thread(_estimate_usage, request.messages, reader.text)
        yield Completion(
            text=reader.text,
            finish_reason=reader.finish_reason,
            usage=usage,
            model=reader.model or self._model,
        )

    async def _open(self, request: ChatRequest, *, retries: int) -> _Opened:
        """Send the request (the SDK retrying it up to `retries` times) until its headers arrive, within the
        first-token allowance and the deadline; degrade json_schema -> json_object -> text and drop the
        thinking hints when the server rejects them."""
        loop = asyncio.get_running_loop()
        client = self._client.with_options(max_retries=retries)
        hints = self._thinking_hints
        while True:
            json_mode = request.json_mode(self._json_mode)
            wire = request.wire_messages(json_mode)
            max_tokens = await self._fit(wire, request.max_tokens)
            response_format = request.response_format(json_mode)
            sent = client.chat.completions.with_raw_response.create(
                model=self._model,
                messages=wire,
                max_tokens=max_tokens,
                temperature=request.temperature,
                stream=True,
                stream_options={"include_usage": True},
                response_format=openai.omit if response_format is None else response_format,
                extra_body=dict(THINKING_OFF) if hints else None,
            )
            sent_at = loop.time()
            allowed = self._first_token_timeout
            if request.deadline_at is not None:
                allowed = max(0.0, min(allowed, request.deadline_at - sent_at))
            try:
                raw = await asyncio.wait_for(sent, timeout=allowed)
            except TimeoutError as exc:
                raise Stalled("no first token in time (no response headers)") from exc
            except openai.APIStatusError as exc:
                if json_mode is not None and json_mode in NEXT_JSON_MODE and rejects_response_format(exc):
                    downgraded = NEXT_JSON_MODE[json_mode]
                    log.warning(
                        "%s: %s rejected (%s); using %s", request.label, json_mode, describe(exc), downgraded
                    )
                    self._json_mode = downgraded
                    continue
                if hints and exc.status_code in (400, 422):
                    log.warning("%s: %s; retrying without thinking hints", request.label, describe(exc))
                    hints = False
                    continue
                raise
            if hints != self._thinking_hints:
                log.warning("%s: the server refuses thinking hints; no longer sending them", request.label)
                self._thinking_hints = False
            return _Opened(raw.parse(), sent_at, raw.retries_taken)

    async def _fit(self, wire: Sequence[ChatCompletionMessageParam], max_tokens: int) -> int:
        """max_tokens lowered to the room the context window leaves; ModelUnavailable when none is left."""
        window = await self.context_window()
        if window is None:
            return max_tokens
        contents = [str(m.get("content") or "") for m in wire]
        prompt = await asyncio.to_thread(message_tokens, contents)
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


def _repetition_check(label: str) -> Callable[[str], None]:
    """Raise ModelOutputInvalid as soon as the text so far ends in a repetition loop."""

    def check(text: str) -> None:
        unit = repetition_loop(text)
        if unit is not None:
            raise ModelOutputInvalid(f"{label}: repetition loop ({unit[:20]!r} repeated)")

    return check
