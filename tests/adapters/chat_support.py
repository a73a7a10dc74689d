"""Shared helpers of the chat-model adapter tests: a fast backoff, a model on the test server, draining a stream."""

from __future__ import annotations

from collections.abc import Sequence

from adapters.models.openai_chat import OpenAIChatModel
from adapters.models.openai_retry import Backoff
from core.models import Completion, Message
from tests.model_server import ModelServer

FAST = Backoff(base=0.01, cap=0.05, retry_after_cap=5.0)


def make_model(server: ModelServer, **options: object) -> OpenAIChatModel:
    """An OpenAIChatModel on the test server: 2 s timeouts, 3 retries, FAST backoff unless overridden."""
    settings: dict[str, object] = {"timeout": 2.0, "retries": 3, "backoff": FAST}
    settings.update(options)
    return OpenAIChatModel(base_url=server.base_url, model=server.model, **settings)  # type: ignore[arg-type]


async def drain(
    model: OpenAIChatModel, messages: Sequence[Message], *, max_tokens: int = 64, **options: object
) -> tuple[list[str], Completion]:
    """The deltas and the final Completion of one stream; no text may follow the Completion."""
    deltas: list[str] = []
    final: Completion | None = None
    async for item in model.stream(messages, max_tokens=max_tokens, **options):  # type: ignore[arg-type]
        if isinstance(item, Completion):
            final = item
        else:
            assert final is None, "text arrived after the final Completion"
            deltas.append(item)
    assert final is not None
    return deltas, final
