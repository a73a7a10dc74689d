"""Pytest fixtures for the OpenAI-compatible test server: `model_server` and `model_env`.

Use them from any test folder by re-exporting them in the test module (or a conftest.py there)::

    from tests import model_fixtures

    model_server = model_fixtures.model_server  # pytest finds fixtures by module-level name

or, for the whole suite, with `pytest_plugins = ["tests.model_fixtures"]` in the root tests/conftest.py
(pytest only honours pytest_plugins in the root conftest).

    async def test_something(model_server: ModelServer) -> None:
        model_server.enqueue("回答", Reply.failure(500))
        model = OpenAIChatModel(base_url=model_server.base_url, model=model_server.model)
        ...
        assert len(model_server.chat_requests) == 1

`model_env` additionally sets OPENAI_BASE_URL, OPENAI_API_KEY and KB_CHAT_MODEL (and KB_AUX_MODEL) for
code that reads bot.settings (the CLI, `kb serve` subprocesses inherit os.environ).
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.model_server import ModelServer


@pytest.fixture
async def model_server() -> AsyncIterator[ModelServer]:
    """A started ModelServer for one test (echo replies until the test enqueues or sets a responder)."""
    async with ModelServer() as server:
        yield server


@pytest.fixture
def model_env(model_server: ModelServer, monkeypatch: pytest.MonkeyPatch) -> ModelServer:
    """model_server, with the OPENAI_* and KB_*_MODEL environment pointing at it."""
    monkeypatch.setenv("OPENAI_BASE_URL", model_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("KB_CHAT_MODEL", model_server.model)
    monkeypatch.setenv("KB_AUX_MODEL", model_server.model)
    return model_server
