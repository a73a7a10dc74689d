"""Reading Slack API failures safely (the response body is not always JSON), and classifying them."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import aiohttp
from slack_sdk.errors import SlackApiError, SlackRequestError

# Slack's own codes for "try again later" (besides HTTP 429 and 5xx).
TRANSIENT_CODES = frozenset(
    {"ratelimited", "rate_limited", "service_unavailable", "fatal_error", "internal_error", "request_timeout"}
)
# The message to edit or delete is gone or can no longer be changed: post a new one instead.
GONE_CODES = frozenset(
    {"message_not_found", "cant_update_message", "cant_delete_message", "edit_window_closed", "msg_not_found"}
)
# Exceptions a Slack Web API call raises besides SlackApiError (network, timeouts).
CALL_ERRORS: tuple[type[BaseException], ...] = (
    SlackApiError,
    SlackRequestError,
    aiohttp.ClientError,
    asyncio.TimeoutError,
    OSError,
)


def error_code(exc: SlackApiError) -> str:
    """Slack's error code ("ratelimited", "invalid_auth", ...) or the HTTP status when there is none."""
    data = getattr(exc.response, "data", None)
    if isinstance(data, dict) and data.get("error"):
        return str(data["error"])
    return f"http_{getattr(exc.response, 'status_code', '?')}"


@dataclass(frozen=True, slots=True)
class CallFailure:
    """Why one Web API call failed: Slack's code, the Retry-After it asked for, and what to do next."""

    code: str
    retry_after: float | None = None

    @property
    def transient(self) -> bool:
        """Worth retrying later: a rate limit, a server error, or the network."""
        return (
            self.retry_after is not None
            or self.code in TRANSIENT_CODES
            or self.code.startswith("http_5")
            or self.code == "http_429"
            or self.code == "connection_error"
        )

    @property
    def maybe_done(self) -> bool:
        """The call may have taken effect although it failed: no answer came back (the network, a
        timeout) or the server failed while handling it; Slack's own refusals and rate limits did nothing."""
        return self.code == "connection_error" or (
            self.code.startswith("http_5") and self.retry_after is None
        )

    @property
    def gone(self) -> bool:
        """The message is gone or frozen: editing it again cannot succeed."""
        return self.code in GONE_CODES


def failure_of(exc: BaseException) -> CallFailure:
    """The CallFailure for an exception raised by an AsyncWebClient call."""
    if isinstance(exc, SlackApiError):
        status = getattr(exc.response, "status_code", 0)
        headers = getattr(exc.response, "headers", None) or {}
        retry_after = None
        for name, value in headers.items():
            if str(name).lower() == "retry-after":
                try:
                    retry_after = max(0.0, float(value))
                except (TypeError, ValueError):
                    retry_after = 1.0
        if status == 429 and retry_after is None:
            retry_after = 1.0
        code = error_code(exc)
        return CallFailure("ratelimited" if status == 429 else code, retry_after)
    return CallFailure("connection_error")
