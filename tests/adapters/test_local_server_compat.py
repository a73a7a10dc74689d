"""What local OpenAI-compatible servers and small models really do, each pinned against the HTTP test server."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator

import pytest

from adapters.models.openai_chat import OpenAIChatModel
from core.errors import ModelOutputInvalid, ModelTruncated, ModelUnavailable
from core.models import Completion, Message
from tests import model_fixtures
from tests.adapters import chat_support
from tests.model_script import Reply
from tests.model_server import ModelServer

model_server = model_fixtures.model_server

QUESTION = [Message("system", "判断资料是否充分。"), Message("user", "遗嘱需要公证吗?")]
SCHEMA = {
    "title": "evidence_assessment",
    "type": "object",
    "properties": {"sufficient": {"type": "boolean"}},
    "required": ["sufficient"],
}
JSON_OBJECT_REJECTED = 'response_format type "json_object" is not supported by this server'


def make_model(server: ModelServer, **options: object) -> OpenAIChatModel:
    return chat_support.make_model(server, **{"first_token_timeout": 2.0, "retries": 2, **options})


@pytest.fixture
async def chat(model_server: ModelServer) -> AsyncIterator[OpenAIChatModel]:
    model = make_model(model_server)
    yield model
    await model.aclose()


async def drain(model: OpenAIChatModel, **options: object) -> tuple[list[str], Completion]:
    return await chat_support.drain(model, QUESTION, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize("status", [400, 422, 500])
async def test_json_schema_rejection_by_400_422_or_500_falls_back_to_json_object(
    chat: OpenAIChatModel, model_server: ModelServer, status: int
) -> None:
    """A schema-related rejection by 400, 422 or 500 (llama-cpp-python answers 500) switches to json_object."""
    model_server.enqueue(Reply.json_schema_rejected(status=status), '{"sufficient": true}')
    result = await chat.complete(QUESTION, max_tokens=50, json_schema=SCHEMA)
    assert json.loads(result.text) == {"sufficient": True}
    kinds = [(r.response_format or {}).get("type") for r in model_server.chat_requests]
    assert kinds == ["json_schema", "json_object"]


async def test_a_500_without_a_schema_message_is_retried_not_downgraded(
    chat: OpenAIChatModel, model_server: ModelServer
) -> None:
    """A plain 500 is a transient failure (retried with the same json_schema), not a rejection of the format."""
    model_server.enqueue(Reply.failure(500, "CUDA out of memory"), '{"sufficient": false}')
    result = await chat.complete(QUESTION, max_tokens=50, json_schema=SCHEMA)
    assert json.loads(result.text) == {"sufficient": False}
    kinds = [(r.response_format or {}).get("type") for r in model_server.chat_requests]
    assert kinds == ["json_schema", "json_schema"]
    assert chat.json_mode == "json_schema"


async def test_json_object_rejected_too_falls_back_to_plain_text_with_json_extraction(
    chat: OpenAIChatModel, model_server: ModelServer
) -> None:
    """When json_object is refused as well, the schema goes in the prompt, no response_format is sent, and
    the JSON is taken out of a fenced block with leading text (what the 1.5B writes without a format)."""
    model_server.enqueue(
        Reply.json_schema_rejected(),
        Reply.failure(400, JSON_OBJECT_REJECTED),
        '好的,以下是判断结果:\n```json\n{"sufficient": false}\n```\n希望有帮助。',
        '结果是 {"sufficient": true} 。',
    )
    first = await chat.complete(QUESTION, max_tokens=50, json_schema=SCHEMA)
    second = await chat.complete(QUESTION, max_tokens=50, json_schema=SCHEMA)
    assert (json.loads(first.text), json.loads(second.text)) == ({"sufficient": False}, {"sufficient": True})
    formats = [(r.response_format or {}).get("type") for r in model_server.chat_requests]
    assert formats == ["json_schema", "json_object", None, None]
    assert chat.json_mode == "text"
    plain = model_server.chat_requests[2]
    assert json.dumps(SCHEMA, ensure_ascii=False) in plain.system_prompt
    assert plain.system_prompt.startswith("判断资料是否充分。")


async def test_a_repetition_loop_inside_a_json_string_is_invalid_output_and_stops_reading(
    chat: OpenAIChatModel, model_server: ModelServer
) -> None:
    """The 0.5B's "遗嘱是否需要？遗嘱是否需要？…" loop is ModelOutputInvalid, raised before the token cap."""
    looping = '{"sufficient": false, "missing": "' + "遗嘱是否需要？" * 60 + '"}'
    model_server.enqueue(Reply.text(looping, chunks=40, chunk_delay=0.02))
    started = time.monotonic()
    with pytest.raises(ModelOutputInvalid, match="repetition loop"):
        await chat.complete(QUESTION, max_tokens=900, json_schema=SCHEMA)
    assert time.monotonic() - started < 0.02 * 40  # it stopped reading before the stream's end
    assert len(model_server.chat_requests) == 1


async def test_a_json_string_cut_off_by_max_tokens_is_truncated(
    chat: OpenAIChatModel, model_server: ModelServer
) -> None:
    """A JSON object cut by the token cap (finish_reason length) is ModelTruncated, never parsed."""
    model_server.enqueue(Reply.truncated('{"sufficient": false, "missing": "继承顺序', chunks=3))
    with pytest.raises(ModelTruncated):
        await chat.complete(QUESTION, max_tokens=20, json_schema=SCHEMA)


async def test_a_slow_but_steady_stream_is_not_a_timeout(model_server: ModelServer) -> None:
    """Ten chunks 0.15 s apart (1.5 s in all) pass a 0.5 s between-chunk timeout."""
    model_server.enqueue(Reply.text("一二三四五六七八九十", chunks=10, chunk_delay=0.15))
    model = make_model(model_server, timeout=0.5)
    deltas, final = await drain(model)
    assert final.text == "一二三四五六七八九十" and len(deltas) == 10
    assert len(model_server.chat_requests) == 1


async def test_the_first_token_has_its_own_allowance(model_server: ModelServer) -> None:
    """Prompt processing (1 s before the first token) is judged by first_token_timeout, not timeout."""
    model_server.enqueue(Reply.text("答案", delay=1.0))
    patient = make_model(model_server, timeout=0.3, first_token_timeout=3.0)
    _, final = await drain(patient)
    assert final.text == "答案"
    model_server.enqueue(Reply.text("答案", delay=1.0), Reply.text("答案", delay=1.0))
    hasty = make_model(model_server, timeout=3.0, first_token_timeout=0.3, retries=1)
    with pytest.raises(ModelUnavailable, match="first token"):
        await drain(hasty)


@pytest.mark.parametrize("where", ["before any text", "after text"])
async def test_a_stream_that_ends_without_finish_reason_is_never_a_complete_answer(
    chat: OpenAIChatModel, model_server: ModelServer, where: str
) -> None:
    """A body that ends with no finish_reason and no [DONE] is retried while nothing was shown, else fails."""
    if where == "before any text":
        model_server.enqueue(Reply.ends_without_finish("", chunks=1), Reply.text("完整的回答", chunks=2))
        deltas, final = await drain(chat)
        assert "".join(deltas) == final.text == "完整的回答" and final.finish_reason == "stop"
        assert len(model_server.chat_requests) == 2
        return
    model_server.enqueue(Reply.ends_without_finish("回答被截断在半", chunks=2), "不应被请求")
    received: list[str] = []
    with pytest.raises(ModelUnavailable, match="without a finish_reason"):
        async for item in chat.stream(QUESTION, max_tokens=64):
            assert isinstance(item, str), "a cut-off stream must not end with a Completion"
            received.append(item)
    assert "".join(received) == "回答被截断在半"
    assert len(model_server.chat_requests) == 1


async def test_complete_rejects_a_cut_off_stream_after_its_retries(
    chat: OpenAIChatModel, model_server: ModelServer
) -> None:
    """complete() never returns a cut-off reply: each cut is retried, and past the retries it fails."""
    model_server.responder = lambda request: Reply.ends_without_finish('{"sufficient": tr', chunks=2)
    with pytest.raises(ModelUnavailable, match="without a finish_reason"):
        await chat.complete(QUESTION, max_tokens=50, json_schema=SCHEMA)
    assert len(model_server.chat_requests) == 3  # one try and two retries


async def test_the_deadline_bounds_a_hung_call_across_its_retries(model_server: ModelServer) -> None:
    """retries × first_token_timeout would be 40 s; a 0.8 s deadline ends the call in about 0.8 s."""
    model_server.responder = lambda request: Reply.hanging()
    model = make_model(model_server, first_token_timeout=10.0, retries=3, deadline=0.8)
    started = time.monotonic()
    with pytest.raises(ModelUnavailable):
        await model.complete(QUESTION, max_tokens=10)
    assert time.monotonic() - started < 2.0
    with pytest.raises(ModelUnavailable):
        await drain(model)
    assert time.monotonic() - started < 4.0


async def test_an_answer_that_flows_is_not_cut_by_the_deadline(model_server: ModelServer) -> None:
    """The deadline bounds the wait for an answer's first text; a steady answer may run past it."""
    model_server.enqueue(Reply.text("第一句。第二句。第三句。", chunks=3, chunk_delay=0.4))
    model = make_model(model_server, deadline=0.5)
    _, final = await drain(model)
    assert final.text == "第一句。第二句。第三句。"


async def test_max_tokens_fits_the_window_the_server_reports(model_server: ModelServer) -> None:
    """With llama.cpp's /props saying n_ctx=600, a 1,500-token answer request asks for what fits, and a
    prompt that leaves no room fails before anything is sent (the fallback answers)."""
    model_server.context_window = 600
    model = make_model(model_server)
    model_server.enqueue("答案")
    _, final = await drain(model, max_tokens=1500)
    assert final.text == "答案"
    (request,) = model_server.chat_requests
    assert request.max_tokens is not None and 300 < request.max_tokens < 600
    huge = [Message("system", "规则。"), Message("user", "很长的资料。" * 400)]
    with pytest.raises(ModelUnavailable, match="context window"):
        await model.complete(huge, max_tokens=200)
    assert len(model_server.chat_requests) == 1
    assert await model.context_window() == 600


async def test_the_configured_window_applies_when_the_server_reports_none(model_server: ModelServer) -> None:
    """A server without /props or a length in /v1/models is held to KB_MODEL_CONTEXT_TOKENS."""
    model = make_model(model_server, context_tokens=400)
    model_server.enqueue("答案")
    await drain(model, max_tokens=1500)
    (request,) = model_server.chat_requests
    assert request.max_tokens is not None and request.max_tokens < 400
    unknown = make_model(model_server)
    model_server.enqueue("答案")
    await drain(unknown, max_tokens=1500)
    assert model_server.chat_requests[-1].max_tokens == 1500


async def test_an_answer_that_loops_is_stopped_and_kept_up_to_the_loop(
    chat: OpenAIChatModel, model_server: ModelServer
) -> None:
    """The 1.5B repeated one sentence to the 1,500-token cap (minutes on a CPU): the stream stops at the loop,
    the final text keeps one copy, and finish_reason "repetition" marks it like a truncated answer."""
    looping = "报销期限为 30 天[1]。" + "请按规定提交。" * 40
    model_server.enqueue(Reply.text(looping, chunks=50, chunk_delay=0.01))
    deltas, final = await drain(chat, max_tokens=1500)
    assert final.finish_reason == "repetition"
    assert final.text == "报销期限为 30 天[1]。请按规定提交。"
    assert len("".join(deltas)) < len(looping)  # it stopped reading


async def test_an_answer_with_a_rule_line_or_a_table_is_not_a_loop(
    chat: OpenAIChatModel, model_server: ModelServer
) -> None:
    """A Markdown rule or table separator repeats characters but is an ordinary answer."""
    table = "| 项目 | 标准 |\n" + "|" + "-" * 130 + "|\n| 住宿 | 450 元 |\n" + "=" * 130
    model_server.enqueue(Reply.text(table, chunks=6))
    _, final = await drain(chat, max_tokens=1500)
    assert final.finish_reason == "stop" and final.text == table
