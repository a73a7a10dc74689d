"""One place that turns the model clients' exceptions into core.errors: `with map_model_errors(label): ...`.

In the style of httpx's `map_httpcore_exceptions`: a with-block around a call to the openai SDK or to an
aiohttp service (classifier, reranker) re-raises any transport, status or body exception as the domain's
ModelUnavailable / ModelTruncated / ModelOutputInvalid, `from` the original so the log keeps the cause.
No library maps its exceptions onto this project's errors, so this small module is written by hand;
before it, each client mapped its HTTP errors itself, each a little differently.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import aiohttp
import openai

from core.errors import ModelError, ModelOutputInvalid, ModelRejected, ModelTruncated, ModelUnavailable


class StreamInterrupted(Exception):
    """A streamed reply that stalled (no chunk in time) or ended without a finish_reason: transient.

    The one failure no client library reports: the chat adapter's own stream reading raises it.
    """


class RequestRejected(ModelUnavailable):
    """An HTTP 4xx from a small service: it is up, this request was refused (so not remembered as down)."""


# Every public openai exception, mapped explicitly (a test fails when the SDK adds one we have not
# decided about). Names absent from the installed SDK version are skipped.
CoreModelError = type[ModelUnavailable] | type[ModelTruncated] | type[ModelOutputInvalid]
# 400, 401, 403, 404 and 422 say a setting is wrong (ModelRejected: its message never says "try again later").
_OPENAI_TARGETS: dict[str, CoreModelError] = {
    "OpenAIError": ModelUnavailable,
    "APIError": ModelUnavailable,
    "APIConnectionError": ModelUnavailable,
    "APITimeoutError": ModelUnavailable,
    "APIStatusError": ModelUnavailable,
    "BadRequestError": ModelRejected,
    "AuthenticationError": ModelRejected,
    "OAuthError": ModelUnavailable,
    "PermissionDeniedError": ModelRejected,
    "NotFoundError": ModelRejected,
    "ConflictError": ModelUnavailable,
    "UnprocessableEntityError": ModelRejected,
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
    getattr(openai, name): target for name, target in _OPENAI_TARGETS.items() if hasattr(openai, name)
}
# What the block may raise that is mapped; anything else (a bug) propagates unchanged.
MAPPED = (openai.OpenAIError, aiohttp.ClientError, TimeoutError, ValueError, StreamInterrupted)


def describe(exc: BaseException) -> str:
    """A short log-safe description: class, HTTP status and the server's message (no credentials)."""
    status = getattr(exc, "status_code", None) or getattr(exc, "status", None)
    prefix = f"HTTP {status} " if isinstance(status, int) else ""
    message = getattr(exc, "message", None) or str(exc)
    return f"{prefix}{type(exc).__name__}: {str(message)[:300]}"


def to_core_error(exc: BaseException, *, label: str) -> ModelError:
    """The core error for a client exception (raise it `from exc`); the detail names the call."""
    detail = f"{label}: {describe(exc)}"
    for cls in type(exc).__mro__:
        target = ERROR_MAP.get(cls)
        if target is ModelRejected:
            status = getattr(exc, "status_code", None)
            return ModelRejected(detail, status=status if isinstance(status, int) else None)
        if target is not None:
            return target(detail)
    if isinstance(exc, aiohttp.ClientResponseError) and 400 <= exc.status < 500:
        return RequestRejected(detail)
    if isinstance(exc, TimeoutError):
        return ModelUnavailable(f"{label}: timed out")
    if isinstance(exc, ValueError) and not isinstance(exc, aiohttp.ClientError):
        return ModelOutputInvalid(detail)  # the body could not be decoded (e.g. broken JSON)
    return ModelUnavailable(detail)


@contextmanager
def map_model_errors(label: str) -> Iterator[None]:
    """Re-raise a client exception inside the block as its core error; core errors pass unchanged."""
    try:
        yield
    except ModelError:
        raise
    except MAPPED as exc:
        raise to_core_error(exc, label=label) from exc


async def raise_for_status(response: aiohttp.ClientResponse) -> None:
    """aiohttp's raise_for_status hook, keeping the start of the body as the message (the server's reason).

    Pass it as ``aiohttp.ClientSession(raise_for_status=raise_for_status)``; map_model_errors turns the
    ClientResponseError into RequestRejected (4xx) or ModelUnavailable (5xx).
    """
    if response.status < 400:
        return
    body = (await response.text(errors="replace"))[:300]
    raise aiohttp.ClientResponseError(
        response.request_info,
        response.history,
        status=response.status,
        message=body or str(response.reason),
        headers=response.headers,
    )
