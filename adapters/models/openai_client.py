"""The openai SDK client as this project configures it: the SDK's own retries, plus one hint for them.

The SDK retries 408/409/429/5xx and connection errors with exponential backoff and jitter, honours
`retry-after-ms` / `Retry-After`, and counts the retries it took (`retries_taken`), so none of that is
written here: `max_retries` is KB_MODEL_RETRIES. The one thing it cannot know is that an older llama.cpp
answers a response_format it does not support with a 500: retried, that 500 only comes back, while the
chat adapter's fallback to a simpler JSON mode answers at once. A response hook reads such an error's
body and sets `x-should-retry: false`, the header the SDK obeys.
"""

from __future__ import annotations

from typing import Protocol

import openai

PLACEHOLDER_API_KEY = "not-needed"  # local servers ignore the key, but the SDK insists on one
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "response format")


class _Response(Protocol):
    """What the response hook reads of the SDK's HTTP response."""

    @property
    def status_code(self) -> int: ...

    @property
    def headers(self) -> _Headers: ...

    @property
    def text(self) -> str: ...

    async def aread(self) -> bytes: ...


class _Headers(Protocol):
    def __setitem__(self, key: str, value: str) -> None: ...


def mentions_response_format(text: str) -> bool:
    """Whether an error message is about the response_format (llama.cpp's json_schema rejection)."""
    lowered = text.lower()
    return any(word in lowered for word in _FORMAT_WORDS)


async def _no_retry_for_format_rejections(response: _Response) -> None:
    """Mark a 5xx that rejects the response_format as not worth retrying (the SDK reads x-should-retry)."""
    if response.status_code < 500:
        return
    await response.aread()
    if mentions_response_format(response.text):
        response.headers["x-should-retry"] = "false"


def make_client(
    *, base_url: str | None, api_key: str | None, timeout: float | openai.Timeout, retries: int
) -> openai.AsyncOpenAI:
    """The SDK client: its own retries (max_retries=retries), its default HTTP client with our hook."""
    http_client = openai.DefaultAsyncHttpxClient(
        timeout=timeout, event_hooks={"response": [_no_retry_for_format_rejections]}
    )
    return openai.AsyncOpenAI(
        base_url=base_url,
        api_key=api_key or PLACEHOLDER_API_KEY,
        timeout=timeout,
        max_retries=max(0, retries),
        http_client=http_client,
    )
