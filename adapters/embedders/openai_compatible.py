"""Embedder over an OpenAI-compatible /v1/embeddings endpoint: batching, vectors in input order.

The SDK retries a failed batch (KB_MODEL_RETRIES, its own backoff and Retry-After handling); its errors
are mapped by adapters.models.error_mapping.
"""

from __future__ import annotations

from collections.abc import Sequence

from openai.types import CreateEmbeddingResponse

from adapters.models.error_mapping import map_model_errors
from adapters.models.openai_client import make_client
from core.errors import ModelOutputInvalid, ModelUnavailable


class OpenAIEmbedder:
    """core.ports.Embedder for KB_EMBEDDING_MODEL served by any OpenAI-compatible server."""

    def __init__(
        self,
        *,
        base_url: str | None,
        api_key: str | None = None,
        model: str,
        batch_size: int = 64,
        retries: int = 3,
        timeout: float = 60.0,
        dimension: int | None = None,
    ) -> None:
        self._model = model
        self._batch_size = max(1, batch_size)
        self._dimension = dimension
        self._client = make_client(base_url=base_url, api_key=api_key, timeout=timeout, retries=retries)

    @property
    def name(self) -> str:
        """Model name recorded on every dataset built with it."""
        return self._model

    @property
    def dimension(self) -> int:
        """The vector size: as given, or learnt from the first response (see probe_dimension)."""
        if self._dimension is None:
            raise ModelUnavailable(
                f"embedding model {self._model}: dimension unknown before the first call "
                "(pass dimension= or await probe_dimension())"
            )
        return self._dimension

    async def probe_dimension(self) -> int:
        """The vector size, asking the server once if it is not known yet."""
        if self._dimension is None:
            await self.embed_query("dimension probe")
        return self.dimension

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self._client.close()

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in input order; batches of batch_size, sent one after another."""
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            vectors.extend(await self._embed_batch(list(texts[start : start + self._batch_size])))
        return vectors

    async def embed_query(self, text: str) -> list[float]:
        """The vector of one query text."""
        return (await self._embed_batch([text]))[0]

    async def _embed_batch(self, batch: list[str]) -> list[list[float]]:
        label = f"embeddings ({self._model}, {len(batch)} texts)"
        with map_model_errors(label):
            response = await self._client.embeddings.create(
                model=self._model, input=batch, encoding_format="float"
            )
        return self._vectors(response, expected=len(batch), label=label)

    def _vectors(self, response: CreateEmbeddingResponse, *, expected: int, label: str) -> list[list[float]]:
        """The response's vectors sorted by index, checked for count and a consistent dimension."""
        data = sorted(response.data or [], key=lambda item: item.index)
        if [item.index for item in data] != list(range(expected)):
            raise ModelOutputInvalid(f"{label}: got indexes {[item.index for item in data][:10]}...")
        vectors = [[float(x) for x in item.embedding] for item in data]
        sizes = {len(vector) for vector in vectors}
        if len(sizes) != 1 or 0 in sizes:
            raise ModelOutputInvalid(f"{label}: inconsistent vector sizes {sorted(sizes)}")
        size = sizes.pop()
        if self._dimension is None:
            self._dimension = size
        elif size != self._dimension:
            raise ModelOutputInvalid(f"{label}: vectors have {size} dimensions, expected {self._dimension}")
        return vectors
