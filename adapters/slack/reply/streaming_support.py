"""Whether a workspace gets natively streamed answers (chat.startStream) or the edit-in-place path.

KB_SLACK_STREAMING: `auto` (the default) streams natively until a workspace refuses a streaming call
(an older workspace's unknown_method, not_allowed, a missing scope, an enterprise policy), then uses
edit-in-place there for the rest of the process's life; `native` always tries streaming first (a refused
answer still falls back, nothing is lost); `edit` never streams.
"""

from __future__ import annotations

import logging
from typing import Literal

log = logging.getLogger(__name__)

StreamingMode = Literal["auto", "native", "edit"]
STREAMING_MODES: tuple[StreamingMode, ...] = ("auto", "native", "edit")

# Answers meaning "this workspace (or token, or app) cannot stream", as opposed to "try again later".
REFUSAL_CODES = frozenset(
    {
        "unknown_method",
        "not_allowed",
        "not_allowed_token_type",
        "method_not_supported_for_channel_type",
        "missing_scope",
        "no_permission",
        "access_denied",
        "restricted_action",
        "team_access_not_granted",
        "ekm_access_denied",
        "feature_not_enabled",
        "method_deprecated",
        "invalid_arguments",
        "missing_recipient_team_id",
        "missing_recipient_user_id",
    }
)


class StreamingSupport:
    """The process's memory of which workspaces refused native streaming."""

    def __init__(self, mode: StreamingMode = "auto") -> None:
        self.mode: StreamingMode = mode if mode in STREAMING_MODES else "auto"
        self.refused: dict[str, str] = {}  # team id -> the error that refused streaming there

    def native_for(self, team_id: str) -> bool:
        """True when answers in this workspace should be streamed natively."""
        if self.mode == "edit":
            return False
        return self.mode == "native" or team_id not in self.refused

    def refused_by(self, team_id: str, code: str) -> bool:
        """Note a failed streaming call; True when it was a refusal (the answer falls back to editing)."""
        if code not in REFUSAL_CODES:
            return False
        if self.mode == "auto" and team_id not in self.refused:
            self.refused[team_id] = code
            log.warning(
                "Slack refused chat streaming in workspace %s (%s): answering there by editing messages "
                "in place from now on (KB_SLACK_STREAMING=auto)",
                team_id,
                code,
            )
        return True
