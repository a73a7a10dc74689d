"""OpenAIChatModel through the real openai client against the scripted aiohttp model server."""

from __future__ import annotations

import asyncio
import email.utils
import json
import socket
import time
from collections.abc import AsyncIterator

import openai
import pytest

from adapters.models.chat_request import THINKING_OFF
from adapters.models.error_mapping import StreamInterrupted
from adapters.models.openai_chat import OpenAIChatModel
from core.budget import count_tokens
from core.errors import ModelOutputInvalid, ModelTruncated, ModelUnavailable
from core.models import Completion, Message, Usage
from tests import model_fixtures
from tests.adapters.chat_support import drain, make_model
from tests.model_script import Reply
from tests.model_server import ModelServer

model_server = model_fixtures.model_server  # the shared fixture, re-exported so pytest finds it here

QUESTION = [Message("system", "你是知识库助手。"), Message("user", "行政复议申请期限是多久?")]
SCHEMA = {
    "title": "Assessment",
    "type": "object",
    "properties": {"sufficient": {"type": "boolean"}},
    "required": ["sufficient"],
    "additionalProperties": False,
}


@pytest.fixture
async def chat(model_server: ModelServer) -> AsyncIterator[OpenAIChatModel]:
    model = make_model(model_server)
    yield model
    await model.aclose()


async def collect(model: OpenAIChatModel, **options: object) -> tuple[list[str], Completion]:
    return await drain(model, QUESTION, **options)


async def test_complete_returns_text_and_usage_and_sends_temperature_zero(
    chat: OpenAIChatModel,
    model_server: ModelServer,
) -> None:
    """complete() returns the content with the server's usage, sending temperature 0 and max_tokens, streamed."""
    model_server.enqueue("申请期限为六十日。")
    result = await chat.complete(QUESTION, max_tokens=50)
    prompt_tokens = sum(count_tokens(m.content) for m in QUESTION)
    assert result == Completion(
        "申请期限为六十日。", "stop", Usage(prompt_tokens, count_tokens("申请期限为六十日。")), "test-model"
    )
    (request,) = model_server.chat_requests
    assert (request.temperature, request.max_tokens, request.stream) == (0.0, 50, True)
    assert request.messages == [{"role": m.role, "content": m.content} for m in QUESTION]
    assert request.body["model"] == "test-model"


async def test_thinking_hints_are_sent_only_when_thinking_is_disabled(
    model_server: ModelServer,
) -> None:
    """disable_thinking=True sends chat_template_kwargs and thinking hints; False sends no extras."""
    quiet, thinking = make_model(model_server), make_model(model_server, disable_thinking=False)
    await quiet.complete(QUESTION, max_tokens=10)
    await thinking.complete(QUESTION, max_tokens=10)
    assert [r.extra for r in model_server.chat_requests] == [THINKING_OFF, {}]


async def test_stream_yields_deltas_then_a_completion_with_the_servers_usage(
    chat: OpenAIChatModel,
    model_server: ModelServer,
) -> None:
    """stream() yields each delta as it arrives, then one Completion with usage from include_usage."""
    text = "根据第二十条,申请期限为六十日。"
    model_server.enqueue(Reply.text(text, chunks=4, usage=(31, 9)))
    deltas, final = await collect(chat)
    assert len(deltas) == 4 and "".join(deltas) == text
    assert final == Completion(text, "stop", Usage(31, 9), "test-model")
    (request,) = model_server.chat_requests
    assert request.stream and request.wants_usage and request.temperature == 0.2


async def test_stream_estimates_usage_when_the_server_reports_none(
    chat: OpenAIChatModel,
    model_server: ModelServer,
) -> None:
    """Without a usage chunk the final Completion carries cl100k estimates of prompt and answer."""
    model_server.stream_usage = False
    model_server.enqueue(Reply.text("六十日。", chunks=2))
    _, final = await collect(chat)
    assert final.usage == Usage(sum(count_tokens(m.content) for m in QUESTION), count_tokens("六十日。"))


async def test_complete_raises_truncated_on_finish_reason_length(
    chat: OpenAIChatModel,
    model_server: ModelServer,
) -> None:
    """finish_reason=length from complete() is ModelTruncated; the truncated text is not returned."""
    model_server.enqueue(Reply.truncated("那它们各自"))
    with pytest.raises(ModelTruncated) as caught:
        await chat.complete(QUESTION, max_tokens=5)
    assert "那它们各自" not in str(caught.value)
    assert len(model_server.chat_requests) == 1


async def test_stream_reports_length_in_the_final_completion(
    chat: OpenAIChatModel,
    model_server: ModelServer,
) -> None:
    """A streamed finish_reason=length ends with a Completion saying "length" instead of raising."""
    model_server.enqueue(Reply.truncated("申请期限为", chunks=2))
    deltas, final = await collect(chat)
    assert "".join(deltas) == "申请期限为"
    assert (final.text, final.finish_reason) == ("申请期限为", "length")


async def test_429_with_retry_after_waits_as_told_then_succeeds(
    chat: OpenAIChatModel,
    model_server: ModelServer,
) -> None:
    """A 429 with Retry-After: 1 is retried after about one second, not after the short backoff."""
    model_server.enqueue(Reply.failure(429, "slow down", retry_after=1), "好的")
    result = await chat.complete(QUESTION, max_tokens=10)
    first, second = model_server.chat_requests
    assert result.text == "好的"
    assert 0.95 <= second.received_at - first.received_at < 1.5


@pytest.mark.parametrize("form", ["retry-after-ms", "http-date"])
async def test_the_other_retry_after_forms_are_honoured(
    chat: OpenAIChatModel, model_server: ModelServer, form: str
) -> None:
    """retry-after-ms (here 600 ms) and Retry-After as an HTTP date (about 2 s ahead) set the wait."""
    if form == "retry-after-ms":
        headers, low, high = (("retry-after-ms", "600"),), 0.55, 1.0
    else:
        moment = email.utils.formatdate(time.time() + 2, usegmt=True)
        headers, low, high = (("Retry-After", moment),), 0.9, 2.6  # the date has whole seconds
    model_server.enqueue(
        Reply(status=429, error="slow down", error_type="rate_limit", headers=headers), "好的"
    )
    assert (await chat.complete(QUESTION, max_tokens=10)).text == "好的"
    first, second = model_server.chat_requests
    assert low <= second.received_at - first.received_at < high


async def test_a_retry_after_beyond_the_deadline_ends_the_call_at_the_deadline(
    model_server: ModelServer,
) -> None:
    """A Retry-After of 30 s does not hold a call past its role's deadline (0.5 s here)."""
    model = make_model(model_server, deadline=0.5)
    model_server.enqueue(Reply.failure(429, retry_after=30), "好的")
    started = time.monotonic()
    with pytest.raises(ModelUnavailable, match="deadline"):
        await model.complete(QUESTION, max_tokens=10)
    assert time.monotonic() - started < 1.5
    assert len(model_server.chat_requests) == 1


@pytest.mark.parametrize("status", [408, 409, 429, 500, 502, 503])
async def test_transient_statuses_are_retried(model_server: ModelServer, status: int) -> None:
    """408, 409, 429 and 5xx are retried (by the SDK) and the answer that follows is returned."""
    model = make_model(model_server)
    model_server.enqueue(Reply.failure(status), "好的")
    assert (await model.complete(QUESTION, max_tokens=10)).text == "好的"
    assert len(model_server.chat_requests) == 2


async def test_500_then_success_is_retried(
    chat: OpenAIChatModel,
    model_server: ModelServer,
) -> None:
    """A 500 followed by an answer returns the answer after one retry."""
    model_server.enqueue(Reply.failure(500), "好的")
    assert (await chat.complete(QUESTION, max_tokens=10)).text == "好的"
    assert len(model_server.chat_requests) == 2


async def test_500_forever_raises_unavailable_after_the_retries(model_server: ModelServer) -> None:
    """With retries=2 a server that always fails gets exactly 3 requests, then ModelUnavailable."""
    model_server.responder = lambda request: Reply.failure(503, "overloaded")
    model = make_model(model_server, retries=2)
    with pytest.raises(ModelUnavailable) as caught:
        await model.complete(QUESTION, max_tokens=10)
    assert len(model_server.chat_requests) == 3
    assert caught.value.message("en") == "The model service is unavailable right now; please try again later."
    assert "HTTP 503" in str(caught.value)
    assert isinstance(caught.value.__cause__, openai.InternalServerError)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
async def test_client_errors_are_not_retried(model_server: ModelServer, status: int) -> None:
    """400/401/403/404/422 fail at once with ModelUnavailable: one request, no retry."""
    model_server.responder = lambda request: Reply.failure(status)
    model = make_model(model_server, disable_thinking=False)
    with pytest.raises(ModelUnavailable):
        await model.complete(QUESTION, max_tokens=10)
    assert len(model_server.chat_requests) == 1


async def test_a_hang_past_the_timeout_raises_unavailable(model_server: ModelServer) -> None:
    """A server that never answers times out after the 0.5 s first-token allowance, is retried once, then fails."""
    model_server.responder = lambda request: Reply.hanging()
    model = make_model(model_server, timeout=5.0, first_token_timeout=0.5, retries=1)
    started = time.monotonic()
    with pytest.raises(ModelUnavailable) as caught:
        await model.complete(QUESTION, max_tokens=10)
    assert 1.0 <= time.monotonic() - started < 3.0
    assert len(model_server.chat_requests) == 2
    assert isinstance(caught.value.__cause__, StreamInterrupted)


async def test_a_stream_that_stalls_after_text_raises_unavailable_without_retry(
    model_server: ModelServer,
) -> None:
    """Once a delta went out, a stalled stream raises ModelUnavailable and is not retried."""
    model_server.enqueue(Reply.text("第一段。第二段。", chunks=2, chunk_delay=5.0))
    model = make_model(model_server, timeout=0.5)
    received: list[str | Completion] = []
    with pytest.raises(ModelUnavailable):
        async for item in model.stream(QUESTION, max_tokens=64):
            received.append(item)
    assert received == ["第一段。"]
    assert len(model_server.chat_requests) == 1


async def test_a_stream_dropped_before_any_text_is_retried(
    chat: OpenAIChatModel,
    model_server: ModelServer,
) -> None:
    """A connection dropped before the first delta is retried and the answer streams normally."""
    model_server.enqueue(Reply.disconnect("丢失", after_chunks=0), Reply.text("好的", chunks=2))
    deltas, final = await collect(chat)
    assert "".join(deltas) == final.text == "好的"
    assert len(model_server.chat_requests) == 2


async def test_a_stream_dropped_after_text_raises_unavailable(
    chat: OpenAIChatModel,
    model_server: ModelServer,
) -> None:
    """A connection dropped mid-answer raises ModelUnavailable after the deltas already yielded."""
    model_server.enqueue(Reply.disconnect("一二三四", after_chunks=2, chunks=4), "不应被请求")
    received: list[str | Completion] = []
    with pytest.raises(ModelUnavailable):
        async for item in chat.stream(QUESTION, max_tokens=64):
            received.append(item)
    assert received == ["一", "二"]
    assert len(model_server.chat_requests) == 1


async def test_request_retries_and_stream_retries_share_one_budget(model_server: ModelServer) -> None:
    """With retries=2, a 500 (retried by the SDK) and a cut-off stream (retried by the adapter) use the
    whole budget: the second cut-off fails the call after 3 requests, the answer queued after it unasked."""
    model = make_model(model_server, retries=2)
    cut = Reply.ends_without_finish('{"a": 1', chunks=1)
    model_server.enqueue(Reply.failure(500), cut, cut, "好的")
    with pytest.raises(ModelUnavailable, match="without a finish_reason"):
        await model.complete(QUESTION, max_tokens=10)
    assert len(model_server.chat_requests) == 3


async def test_a_broken_response_body_raises_output_invalid(
    chat: OpenAIChatModel,
    model_server: ModelServer,
) -> None:
    """A 200 whose body is not an event stream (here: broken JSON) is ModelOutputInvalid, and is not retried."""
    model_server.enqueue(Reply.invalid_json(), "不应被请求")
    with pytest.raises(ModelOutputInvalid):
        await chat.complete(QUESTION, max_tokens=10)
    assert len(model_server.chat_requests) == 1


async def test_json_schema_request_and_non_json_content(
    chat: OpenAIChatModel,
    model_server: ModelServer,
) -> None:
    """json_schema is sent strict and named by the schema's title; prose back is ModelOutputInvalid; fenced
    JSON is unwrapped."""
    model_server.enqueue("资料充分。", '```json\n{"sufficient": true}\n```')
    with pytest.raises(ModelOutputInvalid):
        await chat.complete(QUESTION, max_tokens=50, json_schema=SCHEMA)
    result = await chat.complete(QUESTION, max_tokens=50, json_schema=SCHEMA)
    assert json.loads(result.text) == {"sufficient": True}
    assert model_server.chat_requests[0].response_format == {
        "type": "json_schema",
        "json_schema": {
            "name": "Assessment",
            "schema": {key: value for key, value in SCHEMA.items() if key != "title"},
            "strict": True,
        },
    }


async def test_json_schema_rejected_like_llama_cpp_falls_back_and_remembers(
    chat: OpenAIChatModel,
    model_server: ModelServer,
) -> None:
    """llama.cpp's 400 for json_schema switches to json_object with the schema in the prompt, for good."""
    model_server.json_schema_supported = False
    model_server.responder = lambda request: '{"sufficient": false}'
    first = await chat.complete(QUESTION, max_tokens=50, json_schema=SCHEMA)
    second = await chat.complete(QUESTION, max_tokens=50, json_schema=SCHEMA)
    assert json.loads(first.text) == json.loads(second.text) == {"sufficient": False}
    kinds = [r.response_format["type"] for r in model_server.chat_requests if r.response_format]
    assert kinds == ["json_schema", "json_object", "json_object"]
    assert chat.json_mode == "json_object"
    fallback = model_server.chat_requests[1]
    assert fallback.system_prompt.startswith("你是知识库助手。")
    assert json.dumps(SCHEMA, ensure_ascii=False) in fallback.system_prompt
    assert [m["role"] for m in fallback.messages] == ["system", "user"]


async def test_json_schema_rejected_with_500_falls_back_without_retrying(
    chat: OpenAIChatModel,
    model_server: ModelServer,
) -> None:
    """Older llama.cpp builds reject json_schema with a 500: that falls back at once, not after retries."""
    model_server.enqueue(Reply.json_schema_rejected(status=500), '{"sufficient": true}')
    result = await chat.complete(QUESTION, max_tokens=50, json_schema=SCHEMA)
    assert json.loads(result.text) == {"sufficient": True}
    kinds = [(r.response_format or {}).get("type") for r in model_server.chat_requests]
    assert kinds == ["json_schema", "json_object"]


async def test_rejected_thinking_hints_are_retried_without_and_remembered(
    chat: OpenAIChatModel,
    model_server: ModelServer,
) -> None:
    """A server that refuses unknown parameters gets the request again without hints, and never again."""
    model_server.strict_parameters = True
    assert (await chat.complete(QUESTION, max_tokens=10)).text.startswith("echo:")
    await collect(chat)
    assert [bool(r.extra) for r in model_server.chat_requests] == [True, False, False]
    assert chat.sends_thinking_hints is False


async def test_think_blocks_are_stripped_and_reasoning_fields_ignored(
    chat: OpenAIChatModel,
    model_server: ModelServer,
) -> None:
    """A leading <think> block and reasoning_content never reach the returned or streamed text."""
    content = "<think>先想一想第二十条。</think>\n\n申请期限为六十日。"
    model_server.enqueue(Reply.text(content, reasoning="推理字段"), Reply.text(content, chunks=9))
    completed = await chat.complete(QUESTION, max_tokens=50)
    deltas, final = await collect(chat)
    assert completed.text == "".join(deltas) == final.text == "申请期限为六十日。"


@pytest.mark.parametrize("content", ["", "   ", "<think>只有推理</think>"])
async def test_empty_content_raises_output_invalid(
    chat: OpenAIChatModel,
    model_server: ModelServer,
    content: str,
) -> None:
    """Empty, blank or reasoning-only content is ModelOutputInvalid, for complete() and stream()."""
    model_server.enqueue(content, content)
    with pytest.raises(ModelOutputInvalid):
        await chat.complete(QUESTION, max_tokens=10)
    with pytest.raises(ModelOutputInvalid):
        await collect(chat)


async def test_an_unreachable_server_raises_unavailable() -> None:
    """Connection refused is retried, then surfaces as ModelUnavailable."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = OpenAIChatModel(base_url=f"http://127.0.0.1:{port}/v1", model="m", retries=1)
    with pytest.raises(ModelUnavailable) as caught:
        await model.complete(QUESTION, max_tokens=10)
    assert isinstance(caught.value.__cause__, openai.APIConnectionError)
    await model.aclose()


async def test_deltas_arrive_as_streamed_and_calls_run_concurrently(
    chat: OpenAIChatModel,
    model_server: ModelServer,
) -> None:
    """The first delta arrives before the stream ends, and four slow calls overlap instead of queueing."""
    model_server.enqueue(Reply.text("一二三", chunks=3, chunk_delay=0.3))
    started = time.monotonic()
    arrivals: list[float] = []
    async for _ in chat.stream(QUESTION, max_tokens=10):
        arrivals.append(time.monotonic() - started)
    assert arrivals[0] < 0.25 and arrivals[-1] >= 0.6
    model_server.delay = 0.3
    started = time.monotonic()
    results = await asyncio.gather(*(chat.complete(QUESTION, max_tokens=10) for _ in range(4)))
    assert len(results) == 4 and time.monotonic() - started < 0.9
