"""Reading one streamed chat reply: visible text, finish reason and usage, within the silence allowances.

The SDK parses the chunks (ChatCompletionChunk; its models accept the odd chunks local servers send, with
absent fields as None) but has no notion of a stream that stalls after its headers or ends without a
finish_reason: a slow CPU model is judged by the silence between chunks, with a separate allowance for
the first token, and a stream cut off is a failure, never a complete answer. That part is written here.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable

from openai import AsyncStream
from openai.types.chat import ChatCompletionChunk

from adapters.models.error_mapping import StreamInterrupted
from adapters.models.think_filter import ThinkFilter
from core.errors import ModelOutputInvalid
from core.models import Usage


class Stalled(StreamInterrupted):
    """No chunk within the allowed silence: retried like a timeout while nothing has been shown."""


class CutOff(StreamInterrupted):
    """The stream ended without a finish_reason (connection cut, no [DONE]): retried while nothing was shown."""

    def __init__(self, characters: int) -> None:
        super().__init__(f"the stream ended without a finish_reason after {characters} characters")


class StreamReader:
    """Accumulates one streamed completion: visible text (thinking removed), finish reason, usage."""

    def __init__(self, label: str) -> None:
        self.label = label
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

    def feed(self, chunk: ChatCompletionChunk) -> str:
        """The visible text this chunk adds (reasoning is never shown, but counts as the first token)."""
        self.chunks += 1
        if chunk.usage is not None:
            self.usage = Usage(chunk.usage.prompt_tokens or 0, chunk.usage.completion_tokens or 0)
        self.model = chunk.model or self.model
        visible = ""
        for choice in chunk.choices or []:
            if choice.index not in (0, None):  # a server may leave the index out of its only choice
                continue
            content = choice.delta.content if choice.delta is not None else None
            extra = (choice.delta.model_extra or {}) if choice.delta is not None else {}
            if content or extra.get("reasoning_content"):
                self.received_content = True
            if content:
                visible += self.filter.feed(content)
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason
        return self._keep(visible)

    def finish(self) -> str:
        """What the think filter still held back when the stream ended."""
        return self._keep(self.filter.flush())

    async def read(
        self,
        stream: AsyncStream[ChatCompletionChunk],
        *,
        first_token_by: float,
        silence: float,
        check: Callable[[str], None] | None = None,
    ) -> AsyncGenerator[str, None]:
        """Yield the visible text of each chunk: the first content by the loop time first_token_by, then no
        silence longer than `silence` seconds; `check` sees the text so far after each piece. Raises Stalled,
        CutOff (no finish_reason), or ModelOutputInvalid for a reply that is not an event stream."""
        loop = asyncio.get_running_loop()
        chunks = stream.__aiter__()
        try:
            while True:
                if self.received_content:
                    seconds, what = silence, f"no data for {silence:g} s"
                else:
                    seconds, what = max(0.0, first_token_by - loop.time()), "no first token in time"
                try:
                    chunk = await asyncio.wait_for(chunks.__anext__(), timeout=seconds)
                except StopAsyncIteration:
                    break
                except TimeoutError as exc:
                    raise Stalled(what) from exc
                piece = self.feed(chunk)
                if piece:
                    if check is not None:
                        check(self.text)
                    yield piece
        finally:
            await stream.close()
        if self.finish_reason is None:
            kind = str(stream.response.headers.get("content-type", ""))
            if not self.chunks and kind and "event-stream" not in kind:
                raise ModelOutputInvalid(f"{self.label}: the reply is not an event stream ({kind})")
            raise CutOff(len(self.text))
