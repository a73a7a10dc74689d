"""The shared retry policy and vendor-error mapping of the OpenAI-compatible adapters."""

from __future__ import annotations

import email.utils
import inspect
import time

import httpx2
import openai
import pytest

from adapters.models.openai_retry import (
    ERROR_MAP,
    Backoff,
    Retrier,
    is_transient,
    retry_after_seconds,
    to_core_error,
)
from adapters.models.think_filter import ThinkFilter, strip_thinking
from core.errors import ModelError, ModelOutputInvalid, ModelTruncated, ModelUnavailable

REQUEST = httpx2.Request("POST", "http://127.0.0.1:9/v1/chat/completions")


def status_error(status: int, headers: dict[str, str] | None = None) -> openai.APIStatusError:
    response = httpx2.Response(status, headers=headers or {}, request=REQUEST)
    classes = {400: openai.BadRequestError, 429: openai.RateLimitError, 500: openai.InternalServerError}
    return classes.get(status, openai.APIStatusError)(f"Error code: {status}", response=response, body=None)


def test_every_public_openai_exception_is_mapped_explicitly() -> None:
    """Each exception class the openai package exports has an explicit core error (like httpx's test)."""
    public = [getattr(openai, name) for name in openai.__all__]
    exported = {obj for obj in public if inspect.isclass(obj) and issubclass(obj, BaseException)}
    assert openai.RateLimitError in exported and openai.APITimeoutError in exported
    assert sorted(cls.__name__ for cls in exported - ERROR_MAP.keys()) == []
    assert all(issubclass(target, ModelError) for target in ERROR_MAP.values())


@pytest.mark.parametrize(
    ("exc", "expected"),
    [
        (openai.APITimeoutError(REQUEST), ModelUnavailable),
        (openai.APIConnectionError(request=REQUEST), ModelUnavailable),
        (status_error(429), ModelUnavailable),
        (status_error(500), ModelUnavailable),
        (status_error(400), ModelUnavailable),
        (openai.APIResponseValidationError(httpx2.Response(200, request=REQUEST), None), ModelOutputInvalid),
        (ValueError("Expecting value"), ModelOutputInvalid),
        (RuntimeError("anything else"), ModelUnavailable),
    ],
)
def test_to_core_error_maps_by_class(exc: BaseException, expected: type[ModelError]) -> None:
    """Vendor exceptions map to the core error of their nearest mapped class, with a log-safe detail."""
    mapped = to_core_error(exc, label="chat completion (m)")
    assert type(mapped) is expected
    assert str(mapped).startswith("chat completion (m): ")


def test_length_finish_reason_error_maps_to_truncated() -> None:
    """The SDK's LengthFinishReasonError maps to ModelTruncated."""
    assert ERROR_MAP[openai.LengthFinishReasonError] is ModelTruncated


@pytest.mark.parametrize(
    ("status", "transient"),
    [
        *[(status, False) for status in (400, 401, 403, 404, 422)],
        *[(status, True) for status in (408, 429, 500, 502, 503)],
    ],
)
def test_which_statuses_are_transient(status: int, transient: bool) -> None:
    """429, 408 and 5xx are retried; 400/401/403/404/422 never are."""
    assert is_transient(status_error(status)) is transient


def test_connection_errors_and_timeouts_are_transient() -> None:
    """Timeouts and connection failures are retried; a ValueError is not."""
    assert is_transient(openai.APITimeoutError(REQUEST))
    assert is_transient(openai.APIConnectionError(request=REQUEST))
    assert not is_transient(ValueError("broken body"))


def test_retry_after_header_forms() -> None:
    """retry-after-ms wins, then Retry-After as seconds or as an HTTP date; garbage is ignored."""
    assert retry_after_seconds(status_error(429, {"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    assert retry_after_seconds(status_error(429, {"retry-after": "2"})) == 2.0
    future = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 28 <= (retry_after_seconds(status_error(429, {"retry-after": future})) or 0) <= 30
    assert retry_after_seconds(status_error(429, {"retry-after": "soon"})) is None
    assert retry_after_seconds(status_error(429)) is None
    assert retry_after_seconds(openai.APITimeoutError(REQUEST)) is None


def test_backoff_grows_exponentially_with_jitter_and_caps() -> None:
    """Delay n lies in [d/2, d] for d = min(cap, base * 2**n); Retry-After wins up to its cap."""
    backoff = Backoff(base=0.5, cap=4.0, retry_after_cap=10.0)
    for attempt, ceiling in [(0, 0.5), (1, 1.0), (2, 2.0), (3, 4.0), (6, 4.0)]:
        delays = [backoff.delay(attempt) for _ in range(200)]
        assert ceiling / 2 <= min(delays) and max(delays) <= ceiling
        assert max(delays) - min(delays) > 0  # jittered, not constant
    assert backoff.delay(0, retry_after=3.0) == 3.0
    assert backoff.delay(0, retry_after=60.0) == 10.0


async def test_retrier_retries_only_transient_errors_within_its_budget() -> None:
    """run() retries transient errors up to `retries` times and re-raises the last one unchanged."""
    calls: list[int] = []

    async def always(exc: Exception) -> None:
        calls.append(1)
        raise exc

    retrier = Retrier(retries=2, backoff=Backoff(base=0.001, cap=0.002), label="t")
    with pytest.raises(openai.InternalServerError):
        await retrier.run(lambda: always(status_error(500)))
    assert len(calls) == 3 and retrier.retried == 2
    calls.clear()
    with pytest.raises(openai.BadRequestError):
        await Retrier(retries=5, backoff=Backoff(), label="t").run(lambda: always(status_error(400)))
    assert len(calls) == 1


@pytest.mark.parametrize(
    ("pieces", "visible"),
    [
        (["<think>x</think>\n\n答案"], "答案"),
        (["<th", "ink>推", "理</th", "ink>", "\n", "\n答", "案"], "答案"),
        (["  ", "答案"], "  答案"),
        (["答案 <think>not leading</think>"], "答案 <think>not leading</think>"),
        (["<thi"], "<thi"),
        (["<think>never closed"], ""),
    ],
)
def test_think_filter_removes_only_a_leading_block(pieces: list[str], visible: str) -> None:
    """A leading <think> block is removed even when its tags are split across pieces; other text stays."""
    stripper = ThinkFilter()
    out = "".join(stripper.feed(piece) for piece in pieces) + stripper.flush()
    assert out == visible == strip_thinking("".join(pieces))
