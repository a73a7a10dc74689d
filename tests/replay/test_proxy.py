"""The recording proxy in front of a server (the scripted one here), and its cassette replayed."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from pathlib import Path

import aiohttp
import openai

from tests.model_script import Reply
from tests.model_server import ModelServer
from tests.model_server_process import spawn_model_server
from tests.replay.cassette import Cassette
from tests.replay.proxy import RecordingProxy

ROOT = Path(__file__).resolve().parents[2]
MESSAGES = [{"role": "user", "content": "年假有几天？"}]


async def ask(base_url: str) -> tuple[str, list[str], list[str]]:
    """A plain call, a streamed call and the model list, through the real openai client."""
    client = openai.AsyncOpenAI(base_url=base_url, api_key="k", max_retries=0)
    try:
        plain = await client.chat.completions.create(model="m", messages=MESSAGES, max_tokens=20)
        stream = await client.chat.completions.create(
            model="m", messages=MESSAGES, max_tokens=20, stream=True, stream_options={"include_usage": True}
        )
        pieces = [c.choices[0].delta.content or "" async for c in stream if c.choices]
        models = [m.id async for m in client.models.list()]
    finally:
        await client.close()
    return plain.choices[0].message.content or "", pieces, models


async def test_the_proxy_records_every_chunk_and_the_cassette_replays_the_same_answers() -> None:
    """Plain and streamed answers, and GET /v1/models, come back the same from the cassette."""
    async with ModelServer(model="real-model") as upstream:
        upstream.enqueue("一个回答", Reply.text("年假有 10 天", chunks=3))
        async with RecordingProxy(upstream.base_url) as proxy:
            recorded = await ask(proxy.base_url)
    cassette = Cassette({"model": "real-model"}, proxy.interactions)
    paths = [(i.method, i.path) for i in cassette.interactions]
    assert paths == [("POST", "/v1/chat/completions")] * 2 + [("GET", "/v1/models")]
    stream = cassette.interactions[1].response
    assert stream.content_type == "text/event-stream" and stream.chunks is not None
    assert stream.chunks[-1] == "data: [DONE]" and len(stream.chunks) == 6  # 3 deltas, finish, usage
    assert cassette.interactions[1].body["stream_options"] == {"include_usage": True}
    reloaded = Cassette.from_json(cassette.to_json())
    async with ModelServer(cassette=reloaded) as replay:
        replayed = await ask(replay.base_url)
    assert recorded == replayed == ("一个回答", ["年假有", " 10", " 天", ""], ["real-model"])
    assert replay.replayer is not None and replay.replayer.unused == []


async def test_an_error_status_is_recorded_and_replayed() -> None:
    """A 400 from the real server is kept with its body."""
    async with (
        ModelServer(json_schema_supported=False) as upstream,
        RecordingProxy(upstream.base_url) as proxy,
    ):
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="k", max_retries=0)
        try:
            await client.chat.completions.create(
                model="m",
                messages=MESSAGES,
                max_tokens=5,
                response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": {}}},
            )
        except openai.BadRequestError:
            pass
        finally:
            await client.close()
    (interaction,) = proxy.interactions
    assert interaction.response.status == 400
    assert "json_schema" in json.dumps(interaction.response.body)


def test_the_model_server_process_records_with_upstream_and_replays(tmp_path: Path) -> None:
    """`python -m tests.model_server --record FILE --upstream URL`, then `--replay FILE`."""
    cassette_path = tmp_path / "c.json"
    with spawn_model_server("--script", str(_script(tmp_path))) as upstream:
        command = [
            sys.executable,
            "-m",
            "tests.model_server",
            "--record",
            str(cassette_path),
            "--upstream",
            upstream,
        ]
        proxy = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
        try:
            assert proxy.stdout is not None
            base_url = proxy.stdout.readline().strip().removeprefix("MODEL_SERVER_URL=")
            client = openai.OpenAI(base_url=base_url, api_key="k", max_retries=0)
            first = client.chat.completions.create(model="m", messages=MESSAGES, max_tokens=5)
            client.close()
        finally:
            proxy.send_signal(signal.SIGTERM)
            proxy.wait(timeout=10)
            if proxy.stdout is not None:
                proxy.stdout.close()
    assert json.loads(cassette_path.read_text(encoding="utf-8"))["header"]["upstream"].startswith(
        "http://127.0.0.1:"
    )
    with spawn_model_server("--replay", str(cassette_path)) as base_url:
        client = openai.OpenAI(base_url=base_url, api_key="k", max_retries=0)
        again = client.chat.completions.create(model="m", messages=MESSAGES, max_tokens=5)
        client.close()
    assert first.choices[0].message.content == again.choices[0].message.content == "scripted"


def _script(tmp_path: Path) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"default": "scripted"}), encoding="utf-8")
    return path


async def test_a_client_that_leaves_mid_stream_does_not_cut_the_recording() -> None:
    """The proxy reads the real server's stream to its end and marks the exchange as disconnected."""
    async with ModelServer() as upstream, RecordingProxy(upstream.base_url) as proxy:
        upstream.enqueue(Reply.text("一二三四", chunks=4, chunk_delay=0.1))
        body = {"model": "m", "messages": MESSAGES, "max_tokens": 20, "stream": True}
        async with aiohttp.ClientSession() as session:
            response = await session.post(f"{proxy.base_url}/chat/completions", json=body)
            await response.content.readline()
            response.close()
        for _ in range(50):
            if proxy.interactions:
                break
            await asyncio.sleep(0.05)
    (interaction,) = proxy.interactions
    assert proxy.disconnected == [0]
    chunks = interaction.response.chunks or ()
    assert (
        "".join(
            c["choices"][0]["delta"].get("content") or ""
            for c in chunks
            if isinstance(c, dict) and c["choices"]
        )
        == "一二三四"
    )
    assert proxy.timings[0].first_content is not None
