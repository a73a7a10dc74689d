"""HTTP client of the optional multi-hop classifier service (`POST /predict`, `GET /health`)."""

from __future__ import annotations

import math
from typing import Any

import aiohttp

from core.errors import ModelUnavailable

DEFAULT_TIMEOUT = 2.0


class HttpComplexityClassifier:
    """ComplexityClassifier over HTTP; every failure (timeout, HTTP error, bad body) is ModelUnavailable."""

    def __init__(self, base_url: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        self._base = base_url.rstrip("/")
        self._timeout = aiohttp.ClientTimeout(total=timeout)

    async def _request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        url = self._base + path
        try:
            async with (
                aiohttp.ClientSession(timeout=self._timeout) as session,
                session.request(method, url, json=body) as response,
            ):
                if response.status >= 400:
                    detail = (await response.text())[:300]
                    raise ModelUnavailable(f"classifier HTTP {response.status} on {path}: {detail}")
                return await response.json(content_type=None)
        except ModelUnavailable:
            raise
        except TimeoutError as exc:
            raise ModelUnavailable(f"classifier timed out on {path}") from exc
        except (aiohttp.ClientError, ValueError) as exc:
            raise ModelUnavailable(f"classifier request to {path} failed: {exc}") from exc

    async def predict(self, question: str, features: dict[str, float]) -> float:
        """The service's multi_hop_probability in [0, 1] for the question and its rule features."""
        payload = await self._request("POST", "/predict", {"question": question, "features": features})
        probability = payload.get("multi_hop_probability") if isinstance(payload, dict) else None
        if isinstance(probability, bool) or not isinstance(probability, int | float):
            raise ModelUnavailable(f"classifier response has no probability: {str(payload)[:200]}")
        if not math.isfinite(probability) or not 0.0 <= probability <= 1.0:
            raise ModelUnavailable(f"classifier probability out of range: {probability!r}")
        return float(probability)

    async def health(self) -> dict[str, Any]:
        """The service's /health body (e.g. status and model_version); raises ModelUnavailable when down."""
        payload = await self._request("GET", "/health")
        if not isinstance(payload, dict):
            raise ModelUnavailable(f"classifier health is not an object: {str(payload)[:200]}")
        return payload
