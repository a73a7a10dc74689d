"""Cassettes: lossless compact chunks, matching on canonical bodies, recorded order, clear mismatches."""

from __future__ import annotations

import json
from pathlib import Path

import openai

from tests.model_server import ModelServer
from tests.replay.cassette import (
    Cassette,
    Interaction,
    Mismatch,
    RecordedResponse,
    Replayer,
    failure_text,
    first_difference,
)

CHAT = "/v1/chat/completions"


def llama_chunk(content: str | None, *, created: int = 100, finish: str | None = None) -> dict[str, object]:
    """A chunk as llama.cpp's llama-server streams it."""
    delta = {} if content is None else {"content": content}
    return {
        "choices": [{"finish_reason": finish, "index": 0, "delta": delta}],
        "created": created,
        "id": "chatcmpl-abc",
        "model": "/models/qwen.gguf",
        "system_fingerprint": "b0-unknown",
        "object": "chat.completion.chunk",
    }


def streamed(*pieces: str) -> RecordedResponse:
    first = {
        **llama_chunk(None),
        "choices": [{"finish_reason": None, "index": 0, "delta": {"role": "assistant", "content": None}}],
    }
    usage = {
        **llama_chunk(None, created=101),
        "choices": [],
        "usage": {"prompt_tokens": 9, "completion_tokens": 2, "total_tokens": 11},
    }
    chunks = [first, *(llama_chunk(p, created=100 + i // 2) for i, p in enumerate(pieces))]
    chunks += [llama_chunk(None, created=101, finish="stop"), usage, "data: [DONE]"]
    return RecordedResponse(200, "text/event-stream", chunks=tuple(chunks))


def chat(content: str, *, stream: bool = True) -> dict[str, object]:
    return {
        "model": "m",
        "messages": [{"role": "user", "content": content}],
        "max_tokens": 50,
        "stream": stream,
    }


def test_a_stream_is_written_compactly_and_read_back_unchanged(tmp_path: Path) -> None:
    """Carried fields are written once per change, content deltas as plain strings; reading restores each chunk."""
    response = streamed("年假", "有", "10 天")
    cassette = Cassette({"model": "m"}, [Interaction("POST", CHAT, chat("年假?"), response)])
    cassette.save(tmp_path / "c.json")
    written = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    chunks = written["interactions"][0]["response"]["chunks"]
    assert chunks[2:4] == [
        "有",
        {"choices": [{"finish_reason": None, "index": 0, "delta": {"content": "10 天"}}], "created": 101},
    ]
    assert chunks[-1] == {"line": "data: [DONE]"}
    assert Cassette.load(tmp_path / "c.json").interactions[0].response == response


def test_requests_match_on_canonical_bodies_and_repeat_in_recorded_order() -> None:
    """Key order does not matter; the same request recorded twice gets its two answers in order."""
    first, second = (
        RecordedResponse(200, "application/json", body={"n": 1}),
        RecordedResponse(200, "application/json", body={"n": 2}),
    )
    body = chat("q", stream=False)
    replayer = Replayer(
        Cassette({}, [Interaction("POST", CHAT, body, first), Interaction("POST", CHAT, body, second)])
    )
    shuffled = dict(reversed(list(body.items())))
    answers = [replayer.match("post", CHAT, shuffled) for _ in range(3)]
    assert [a.response.body for a in answers if isinstance(a, Interaction)] == [{"n": 1}, {"n": 2}, {"n": 2}]
    assert replayer.served == [0, 1] and replayer.repeated == [1] and replayer.unused == []


def test_an_unmatched_request_names_the_closest_recording_and_the_first_difference() -> None:
    """The mismatch points at the message and the character where the prompt changed."""
    cassette = Cassette(
        {},
        [
            Interaction("GET", "/v1/models", None, RecordedResponse(200, "application/json", body={})),
            Interaction("POST", CHAT, chat("病假每年有几天？"), streamed("12 天")),
            Interaction("POST", CHAT, chat("年假每年有几天？"), streamed("10 天")),
        ],
    )
    replayer = Replayer(cassette)
    found = replayer.match("POST", CHAT, chat("年假每年有多少天？"))
    assert isinstance(found, Mismatch) and found.closest == 2
    assert (
        "body.messages[0].content at character 5: recorded '年假每年有几天？', now '年假每年有多少天？'"
        in found.message
    )
    text = failure_text(replayer) or ""
    assert text.startswith(
        "the prompts changed since the cassette was recorded; re-record with: python -m tests.replay.record"
    )


def test_first_difference_names_missing_and_new_keys_and_list_lengths() -> None:
    """Structure changes are named by their JSON path."""
    assert first_difference({"a": 1}, {"a": 1, "b": 2}) == "body.b: new (not in the recording)"
    assert first_difference({"a": [1, 2]}, {"a": [1]}) == "body.a: 2 items recorded, 1 now"
    assert first_difference({"t": 0.2}, {"t": 0}) == "body.t: recorded 0.2, now 0"
    assert first_difference({"a": [1, {"b": "x"}]}, {"a": [1, {"b": "x"}]}) is None


async def test_a_cassette_replays_through_the_openai_client_streamed_and_plain() -> None:
    """ModelServer(cassette=...) answers the real openai client with the recorded stream and body."""
    plain = RecordedResponse(
        200,
        "application/json",
        body={
            "id": "x",
            "object": "chat.completion",
            "created": 1,
            "model": "m",
            "choices": [
                {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "no"}}
            ],
        },
    )
    cassette = Cassette(
        {},
        [
            Interaction("POST", CHAT, chat("vote", stream=False), plain),
            Interaction("POST", CHAT, chat("年假?"), streamed("年假", "有", "10 天")),
        ],
    )
    async with ModelServer(cassette=cassette) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        vote = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "vote"}], max_tokens=50, stream=False
        )
        stream = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "年假?"}], max_tokens=50, stream=True
        )
        pieces = [
            c.choices[0].delta.content async for c in stream if c.choices and c.choices[0].delta.content
        ]
        try:
            await client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "other"}], max_tokens=50
            )
        except openai.BadRequestError as exc:
            rejected = str(exc)
        await client.close()
    assert vote.choices[0].message.content == "no"
    assert pieces == ["年假", "有", "10 天"]
    assert "no recorded request matches POST /v1/chat/completions; closest recorded request: #0" in rejected
    assert server.replayer is not None and server.replayer.unused == []
