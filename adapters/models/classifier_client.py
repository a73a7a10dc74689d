"""HTTP client of the optional multi-hop classifier service (`POST /predict`, `GET /health`).

A service that is down would cost every question the full timeout (2 s by default), so a failure
(refused connection, timeout, HTTP 5xx, a body that is not JSON or has no probability) is remembered
for ``retry_after`` seconds: meanwhile calls fail at once with ModelUnavailable and the router goes on to
its model vote. The first call after that window tries the service again. A 4xx answer is about the
request, not the service, and is not remembered. One keep-alive session is reused across calls; its
errors are mapped by adapters.models.error_mapping.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from typing import Any

import aiohttp

from adapters.models.error_mapping import RequestRejected, map_model_errors, raise_for_status
from core.errors import ModelError, ModelUnavailable

DEFAULT_TIMEOUT = 2.0
DEFAULT_RETRY_AFTER = 30.0


class HttpComplexityClassifier:
    """ComplexityClassifier over HTTP; a failure is ModelUnavailable (ModelOutputInvalid for a body not JSON)."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        retry_after: float = DEFAULT_RETRY_AFTER,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._base = base_url.rstrip("/")
        self._timeout_seconds = timeout
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._retry_after = retry_after
        self._clock = clock
        self._down_until = 0.0
        self._down_reason = ""
        self._session: aiohttp.ClientSession | None = None
        self._session_loop: asyncio.AbstractEventLoop | None = None
        self.requests_sent = 0

    def _open_session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        session = self._session
        if session is None or session.closed or self._session_loop is not loop:
            session = aiohttp.ClientSession(timeout=self._timeout, raise_for_status=raise_for_status)
            self._session = session
            self._session_loop = loop
        return session

    async def aclose(self) -> None:
        """Close the keep-alive session (the composition root calls this on shutdown)."""
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None

    def _remember_failure(self, reason: str) -> None:
        self._down_until = self._clock() + self._retry_after
        self._down_reason = reason

    async def _send(self, method: str, path: str, body: dict[str, Any] | None) -> Any:
        url = self._base + path
        self.requests_sent += 1
        with map_model_errors(f"classifier {method} {path}"):
            async with self._open_session().request(method, url, json=body) as response:
                return await response.json(content_type=None)

    async def _request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        if self._clock() < self._down_until:
            left = self._down_until - self._clock()
            raise ModelUnavailable(f"classifier marked down for {left:.0f} s more: {self._down_reason}")
        started = self._clock()
        try:
            return await self._send(method, path, body)
        except RequestRejected:
            raise
        except ModelError as exc:
            self._remember_failure(str(exc))
            raise
        except asyncio.CancelledError:
            # The caller's own timeout (the router's) fired first: the service is too slow all the same.
            if self._clock() - started >= 0.9 * self._timeout_seconds:
                self._remember_failure(f"no answer within {self._timeout_seconds:g} s")
            raise

    async def predict(self, question: str, features: dict[str, float]) -> float:
        """The service's multi_hop_probability in [0, 1] for the question and its rule features."""
        payload = await self._request("POST", "/predict", {"question": question, "features": features})
        probability = payload.get("multi_hop_probability") if isinstance(payload, dict) else None
        if isinstance(probability, bool) or not isinstance(probability, int | float):
            self._remember_failure("a response without a probability")
            raise ModelUnavailable(f"classifier response has no probability: {str(payload)[:200]}")
        if not math.isfinite(probability) or not 0.0 <= probability <= 1.0:
            self._remember_failure("a probability out of range")
            raise ModelUnavailable(f"classifier probability out of range: {probability!r}")
        return float(probability)

    async def health(self) -> dict[str, Any]:
        """The service's /health body (ready, model_version, encoder); raises ModelUnavailable when down.

        Always asks the service, even while a failure is remembered; a ready answer forgets the failure.
        """
        payload = await self._send("GET", "/health", None)
        if not isinstance(payload, dict):
            raise ModelUnavailable(f"classifier health is not an object: {str(payload)[:200]}")
        if payload.get("ready") is True:
            self._down_until = 0.0
        return payload
