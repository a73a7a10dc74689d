"""Retries and error mapping for OpenAI-compatible calls: transient errors, backoff with jitter, Retry-After.

The SDK's own retries are switched off (max_retries=0) so that this loop is the only one: it is logged,
bounded, and testable against a real server. 429, 408/409/425, 5xx, connection errors and timeouts are
retried; 400/401/403/404/422 never are. Every openai exception maps to a core.errors.ModelError.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import openai

from core.errors import ModelError, ModelOutputInvalid, ModelTruncated, ModelUnavailable

log = logging.getLogger(__name__)

PLACEHOLDER_API_KEY = "not-needed"  # local servers ignore the key, but the SDK insists on one

T = TypeVar("T")
TRANSIENT_STATUSES = frozenset({408, 409, 425, 429})

# Every public openai exception, mapped explicitly (a test fails when the SDK adds one we have not
# decided about). Names absent from the installed SDK version are skipped.
CoreModelError = type[ModelUnavailable] | type[ModelTruncated] | type[ModelOutputInvalid]
_TARGETS: dict[str, CoreModelError] = {
    "OpenAIError": ModelUnavailable,
    "APIError": ModelUnavailable,
    "APIConnectionError": ModelUnavailable,
    "APITimeoutError": ModelUnavailable,
    "APIStatusError": ModelUnavailable,
    "BadRequestError": ModelUnavailable,
    "AuthenticationError": ModelUnavailable,
    "OAuthError": ModelUnavailable,
    "PermissionDeniedError": ModelUnavailable,
    "NotFoundError": ModelUnavailable,
    "ConflictError": ModelUnavailable,
    "UnprocessableEntityError": ModelUnavailable,
    "RateLimitError": ModelUnavailable,
    "InternalServerError": ModelUnavailable,
    "APIResponseValidationError": ModelOutputInvalid,
    "LengthFinishReasonError": ModelTruncated,
    "ContentFilterFinishReasonError": ModelOutputInvalid,
    "InvalidWebhookSignatureError": ModelUnavailable,
    "SubjectTokenProviderError": ModelUnavailable,
    "WebSocketConnectionClosedError": ModelUnavailable,
    "WebSocketQueueFullError": ModelUnavailable,
}
ERROR_MAP: dict[type[BaseException], CoreModelError] = {
    getattr(openai, name): target for name, target in _TARGETS.items() if hasattr(openai, name)
}


class StreamInterrupted(Exception):
    """A streamed reply that stalled (no chunk in time) or ended without a finish_reason: transient."""


RETRIED = (openai.OpenAIError, StreamInterrupted)


def describe(exc: BaseException) -> str:
    """A short log-safe description: class, HTTP status and the server's message (no credentials)."""
    status = getattr(exc, "status_code", None)
    prefix = f"HTTP {status} " if status else ""
    message = getattr(exc, "message", None) or str(exc)
    return f"{prefix}{type(exc).__name__}: {message[:300]}"


def to_core_error(exc: BaseException, *, label: str) -> ModelError:
    """The core error for a vendor exception (raise it `from exc`); the detail names the call."""
    detail = f"{label}: {describe(exc)}"
    for cls in type(exc).__mro__:
        target = ERROR_MAP.get(cls)
        if target is not None:
            return target(detail)
    if isinstance(exc, ValueError):  # the SDK could not decode the body (e.g. broken JSON)
        return ModelOutputInvalid(detail)
    return ModelUnavailable(detail)


def is_transient(exc: BaseException) -> bool:
    """Whether trying again later may succeed: timeouts, connection errors, 429, 408/409/425 and 5xx."""
    if isinstance(exc, openai.APIConnectionError | StreamInterrupted):  # includes APITimeoutError
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in TRANSIENT_STATUSES or exc.status_code >= 500
    return False


def retry_after_seconds(exc: BaseException) -> float | None:
    """The server's requested wait (retry-after-ms, or Retry-After in seconds or as an HTTP date)."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - time.time())


@dataclass(frozen=True, slots=True)
class Backoff:
    """Exponential backoff with equal jitter; a server's Retry-After wins, up to retry_after_cap."""

    base: float = 0.5
    cap: float = 8.0
    retry_after_cap: float = 20.0

    def delay(self, attempt: int, *, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number attempt + 1 (attempt counts from 0)."""
        if retry_after is not None:
            return min(retry_after, self.retry_after_cap)
        ceiling = min(self.cap, self.base * 2.0**attempt)
        return ceiling / 2 + random.uniform(0, ceiling / 2)


class Retrier:
    """The retry budget of one logical call: up to `retries` waits, shared by all its attempts."""

    def __init__(
        self,
        *,
        retries: int,
        backoff: Backoff,
        label: str,
        transient: Callable[[BaseException], bool] = is_transient,
    ) -> None:
        self.retries = max(0, retries)
        self.backoff = backoff
        self.label = label
        self.transient = transient
        self.retried = 0

    async def wait_before_retry(self, exc: BaseException) -> bool:
        """Sleep before the next attempt and return True, or return False when exc must be raised."""
        if self.retried >= self.retries or not self.transient(exc):
            return False
        wait = self.backoff.delay(self.retried, retry_after=retry_after_seconds(exc))
        self.retried += 1
        log.warning(
            "%s failed (%s); retry %d/%d in %.2f s",
            self.label,
            describe(exc),
            self.retried,
            self.retries,
            wait,
        )
        await asyncio.sleep(wait)
        return True

    async def run(self, call: Callable[[], Awaitable[T]]) -> T:
        """await call(), retrying transient openai errors and stalls; the last error propagates unchanged."""
        while True:
            try:
                return await call()
            except RETRIED as exc:
                if not await self.wait_before_retry(exc):
                    raise


def make_client(
    client: openai.AsyncOpenAI | None,
    *,
    base_url: str | None,
    api_key: str | None,
    timeout: float | openai.Timeout,
) -> openai.AsyncOpenAI:
    """The SDK client with its own retries off (the Retrier owns them), new or derived from an injected one."""
    if client is None:
        return openai.AsyncOpenAI(
            base_url=base_url, api_key=api_key or PLACEHOLDER_API_KEY, timeout=timeout, max_retries=0
        )
    return client.with_options(timeout=timeout, max_retries=0)
