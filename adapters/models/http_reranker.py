"""Reranker over an HTTP rerank API: TEI (`{query, texts}`) or Jina/Cohere (`{model, query, documents}`).

Its errors are mapped by adapters.models.error_mapping (HTTP errors and timeouts: ModelUnavailable; a body
that is not JSON: ModelOutputInvalid).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import aiohttp

from adapters.models.error_mapping import map_model_errors, raise_for_status
from core.errors import ModelOutputInvalid
from core.models import Hit

DEFAULT_TIMEOUT = 10.0
MAX_DOCUMENT_CHARS = 4000


def _document(hit: Hit) -> str:
    text = "\n".join(part for part in (hit.document_name, hit.heading, hit.content) if part)
    return text[:MAX_DOCUMENT_CHARS]


def parse_scores(payload: Any, count: int) -> dict[int, float]:
    """{index: score} from either response shape; raises ModelOutputInvalid for anything else.

    TEI answers ``[{"index": i, "score": s}, ...]``; Jina and Cohere answer
    ``{"results": [{"index": i, "relevance_score": s}, ...]}``.
    """
    rows = payload.get("results") if isinstance(payload, dict) else payload
    if not isinstance(rows, list):
        raise ModelOutputInvalid(f"rerank response is not a list of results: {str(payload)[:200]}")
    scores: dict[int, float] = {}
    for row in rows:
        if not isinstance(row, dict):
            raise ModelOutputInvalid(f"rerank result is not an object: {row!r}")
        index = row.get("index")
        score = row.get("relevance_score", row.get("score"))
        if (
            not isinstance(index, int)
            or isinstance(index, bool)
            or not 0 <= index < count
            or not isinstance(score, int | float)
            or isinstance(score, bool)
            or not math.isfinite(score)
        ):
            raise ModelOutputInvalid(f"rerank result has a bad index or score: {row!r}")
        scores[index] = float(score)
    return scores


class HttpReranker:
    """Reranker calling `POST {base_url}/rerank`; failures raise ModelUnavailable / ModelOutputInvalid."""

    def __init__(
        self,
        base_url: str,
        *,
        model: str | None = None,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self._url = base_url.rstrip("/") + "/rerank"
        self._model = model
        self._api_key = api_key
        self._timeout = aiohttp.ClientTimeout(total=timeout)

    @property
    def name(self) -> str:
        """Method name recorded in the trace."""
        return f"http:{self._model}" if self._model else "http"

    def _body(self, question: str, documents: list[str]) -> dict[str, Any]:
        if self._model:
            return {"model": self._model, "query": question, "documents": documents, "top_n": len(documents)}
        return {"query": question, "texts": documents, "truncate": True}

    async def _post(self, body: dict[str, Any]) -> Any:
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        with map_model_errors(f"rerank {self._url}"):
            async with (
                aiohttp.ClientSession(timeout=self._timeout, raise_for_status=raise_for_status) as session,
                session.post(self._url, json=body, headers=headers) as response,
            ):
                return await response.json(content_type=None)

    async def rerank(self, question: str, hits: Sequence[Hit]) -> list[Hit]:
        """All hits, best first by the service's relevance score; unscored hits follow in their order."""
        if not hits:
            return []
        payload = await self._post(self._body(question, [_document(hit) for hit in hits]))
        scores = parse_scores(payload, len(hits))
        scored = sorted(scores.items(), key=lambda item: (-item[1], hits[item[0]].id))
        ranked = [replace(hits[index], score=score) for index, score in scored]
        ranked.extend(hit for index, hit in enumerate(hits) if index not in scores)
        return ranked
