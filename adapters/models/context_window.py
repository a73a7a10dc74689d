"""The server's context window, and a max_tokens that fits in it beside the prompt.

llama.cpp's server reports its per-slot window at GET /props (`default_generation_settings.n_ctx`), vLLM at
GET /v1/models (`max_model_len`), llama.cpp's /v1/models the trained length (`meta.n_ctx_train`); OpenAI
reports none. A request whose prompt plus max_tokens exceeds the window is refused by llama.cpp (HTTP 400)
or silently cut, so the answer's max_tokens is lowered to what fits.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import aiohttp
from yarl import URL

from core.budget import server_prompt_estimate

log = logging.getLogger(__name__)

PROBE_TIMEOUT_SECONDS = 5.0


def _positive_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def window_from_props(body: Mapping[str, Any]) -> int | None:
    """n_ctx from llama.cpp's /props (newer builds nest it in default_generation_settings)."""
    settings = body.get("default_generation_settings")
    nested = settings.get("n_ctx") if isinstance(settings, Mapping) else None
    return _positive_int(nested) or _positive_int(body.get("n_ctx"))


def window_from_models(body: Mapping[str, Any], model: str) -> int | None:
    """max_model_len (vLLM) or meta.n_ctx_train (llama.cpp) of `model` (or the only model) in /v1/models."""
    entries = [e for e in body.get("data") or [] if isinstance(e, Mapping)]
    chosen = [e for e in entries if e.get("id") == model] or (entries if len(entries) == 1 else [])
    for entry in chosen:
        meta = entry.get("meta")
        found = _positive_int(entry.get("max_model_len")) or (
            _positive_int(meta.get("n_ctx_train")) if isinstance(meta, Mapping) else None
        )
        if found:
            return found
    return None


async def probe_context_window(base_url: str, *, model: str, api_key: str | None) -> int | None:
    """The window the server reports (/props, then /v1/models), or None when it reports none."""
    root = URL(base_url.rstrip("/") + "/")
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    server_root = root.with_path(root.path.removesuffix("v1/") or "/")
    timeout = aiohttp.ClientTimeout(total=PROBE_TIMEOUT_SECONDS)
    async with aiohttp.ClientSession(timeout=timeout, headers=headers) as session:
        for url, read in (
            (server_root.join(URL("props")), window_from_props),
            (root.join(URL("models")), lambda body: window_from_models(body, model)),
        ):
            try:
                async with session.get(url) as response:
                    if response.status != 200:
                        continue
                    body = await response.json(content_type=None)
            except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
                log.debug("context window probe %s failed: %s", url, exc)
                continue
            if isinstance(body, Mapping) and (window := read(body)):
                return window
    return None


def fitted_max_tokens(prompt_tokens: int, max_tokens: int, window: int | None) -> int:
    """max_tokens lowered so that the estimated prompt plus the reply fit the window (≤ 0: no room)."""
    if window is None:
        return max_tokens
    room = window - server_prompt_estimate(prompt_tokens)
    return min(max_tokens, room)
