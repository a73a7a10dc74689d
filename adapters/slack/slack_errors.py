"""Reading Slack API failures safely (the response body is not always JSON)."""

from __future__ import annotations

from slack_sdk.errors import SlackApiError


def error_code(exc: SlackApiError) -> str:
    """Slack's error code ("ratelimited", "invalid_auth", ...) or the HTTP status when there is none."""
    data = getattr(exc.response, "data", None)
    if isinstance(data, dict) and data.get("error"):
        return str(data["error"])
    return f"http_{getattr(exc.response, 'status_code', '?')}"
