"""Shared helpers of the chat-model adapter tests: a model on the test server, draining a stream."""

from __future__ import annotations

from collections.abc import Sequence

from adapters.models.openai_chat import OpenAIChatModel
from core.models import Completion, Message
from tests.model_server import ModelServer


def make_model(server: ModelServer, **options: object) -> OpenAIChatModel:
    """An OpenAIChatModel on the test server: 2 s timeouts and 3 retries unless overridden."""
    settings: dict[str, object] = {"timeout": 2.0, "retries": 3}
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
