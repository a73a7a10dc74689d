"""The scripted OpenAI-compatible test server itself: in-process, in a thread, and as a subprocess."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path

import openai
import pytest

from bot.settings import Settings
from tests import model_fixtures
from tests.model_script import RecordedRequest, Reply
from tests.model_server import ModelServer, hashed_vector
from tests.model_server_process import spawn_model_server

model_server, model_env = model_fixtures.model_server, model_fixtures.model_env  # shared fixtures


async def test_models_embeddings_and_an_async_responder_with_a_fixed_delay() -> None:
    """/v1/models lists the model; base64 and float embeddings agree; delay applies to every chat call."""

    async def responder(request: RecordedRequest) -> str:
        return f"第{len(request.messages)}条"

    async with ModelServer(model="qwen-test", delay=0.2, responder=responder) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        assert [m.id async for m in client.models.list()] == ["qwen-test"]
        as_base64 = await client.embeddings.create(model="e", input=["甲", "乙"])
        as_float = await client.embeddings.create(model="e", input="甲", encoding_format="float")
        assert as_base64.data[0].embedding == pytest.approx(as_float.data[0].embedding, abs=1e-6)
        assert as_float.data[0].embedding == pytest.approx(hashed_vector("甲", 32))
        started = time.monotonic()
        answer = await client.chat.completions.create(
            model="qwen-test", messages=[{"role": "user", "content": "q"}], max_tokens=5
        )
        assert time.monotonic() - started >= 0.2
        assert answer.choices[0].message.content == "第1条"
        await client.close()


def test_running_in_a_thread_serves_blocking_clients() -> None:
    """running_in_thread() serves a synchronous client while the test thread scripts and inspects."""
    server = ModelServer()
    with server.running_in_thread() as base_url:
        server.enqueue(Reply.text("你好", chunks=2))
        client = openai.OpenAI(base_url=base_url, api_key="k", max_retries=0)
        stream = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True
        )
        assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == "你好"
        client.close()
    assert [r.last_user_message for r in server.chat_requests] == ["hi"]


def test_a_subprocess_server_follows_its_script_and_control_endpoints(tmp_path: Path) -> None:
    """`python -m tests.model_server --script` replays the script, then the default; HTTP control works."""
    script = tmp_path / "script.json"
    replies = ["第一", Reply.failure(429, retry_after=0).to_dict()]
    script.write_text(json.dumps({"replies": replies, "default": "默认"}), encoding="utf-8")
    with spawn_model_server("--script", str(script)) as base_url:
        client = openai.OpenAI(base_url=base_url, api_key="k", max_retries=0)

        def ask() -> str | None:
            messages: list[dict[str, str]] = [{"role": "user", "content": "q"}]
            return client.chat.completions.create(model="m", messages=messages).choices[0].message.content  # type: ignore[arg-type]

        assert ask() == "第一"
        with pytest.raises(openai.RateLimitError):
            ask()
        assert ask() == "默认"
        control = base_url.removesuffix("/v1") + "/_script"
        post = urllib.request.Request(f"{control}/replies", data=json.dumps(["插入"]).encode(), method="POST")
        with urllib.request.urlopen(post, timeout=5) as response:
            assert json.load(response) == {"pending": 1}
        assert ask() == "插入"
        with urllib.request.urlopen(f"{control}/requests", timeout=5) as response:
            assert len(json.load(response)) == 4
        client.close()


@pytest.mark.parametrize(
    "reply",
    [
        Reply.text("好", chunks=3, chunk_delay=0.1, reasoning="r", usage=(1, 2)),
        Reply.failure(429, retry_after=2),
        Reply.json_schema_rejected(status=500),
        Reply.disconnect("abc", after_chunks=1),
        Reply.hanging(),
        Reply.invalid_json(),
    ],
)
def test_replies_round_trip_through_json(reply: Reply) -> None:
    """A Reply survives to_dict -> JSON -> from_value unchanged (script files rely on it)."""
    assert Reply.from_value(json.loads(json.dumps(reply.to_dict()))) == reply


async def test_model_env_points_the_settings_at_the_server(model_env: ModelServer) -> None:
    """The model_env fixture makes bot.settings select the test server and its model."""
    settings = Settings()
    assert settings.model.base_url == model_env.base_url
    assert settings.model.chat_model == settings.model.aux_model == model_env.model
    assert not settings.model.uses_extractive_engine
