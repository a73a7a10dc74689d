"""A scripted OpenAI-compatible test server (aiohttp) that tests drive through the real `openai` client.

In a test (see tests/model_fixtures.py for the `model_server` fixture)::

    async with ModelServer() as server:                  # binds 127.0.0.1 on a free port
        server.enqueue("一个回答", Reply.failure(429, retry_after=1), Reply.truncated())
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="test")
        ...
        assert server.chat_requests[0].temperature == 0

Replies are consumed first come first served; when the queue is empty, `server.responder(request)`
computes the reply (default: "echo: <last user message>"). `server.delay` delays every chat call, e.g.
`ModelServer(delay=0.2, responder=lambda r: "ok")` answers every call after 200 ms. Behaviour flags
emulate real servers: `json_schema_supported=False` answers like llama.cpp's server,
`strict_parameters=True` rejects vendor extras (chat_template_kwargs, thinking) like api.openai.com,
`stream_usage=False` ignores stream_options.include_usage like older servers, `context_window=N` serves
llama.cpp's GET /props with that n_ctx.
/v1/embeddings returns deterministic unit vectors (hash-seeded) of `embedding_dimension`; /v1/models
lists `model`. Every request body is recorded in `server.requests`.
`ModelServer(cassette=Cassette.load(path))` answers every request from a recorded real server instead
(tests/replay: match on method, path and canonical body; `server.replayer` says what was served).

For code that blocks or runs in another process:
- `with server.running_in_thread() as base_url:` hosts the server on its own loop in a daemon thread
  (enqueue and read requests from the test thread; a responder then runs in the server thread).
- `python -m tests.model_server --port 0 [--script FILE] [--delay S]` prints `MODEL_SERVER_URL=<url>`
  and serves until SIGTERM; `tests.model_server_process.spawn_model_server(...)` wraps that (script
  format and the /_script/replies and /_script/requests control endpoints: see that module).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import inspect
import json
import struct
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Literal

import numpy as np
from aiohttp import web

from core.budget import count_tokens
from tests.model_script import Endpoint, RecordedRequest, Reply
from tests.replay.cassette import Cassette, Replayer
from tests.replay.proxy import replay_response

DEFAULT_MODEL = "test-model"
ResponderResult = Reply | str
Responder = Callable[[RecordedRequest], ResponderResult | Awaitable[ResponderResult]]
HANG_LIMIT_SECONDS = 600.0


def echo_responder(request: RecordedRequest) -> Reply:
    """The default reply: "echo: " + the last user message."""
    return Reply.text(f"echo: {request.last_user_message}")


def hashed_vector(text: str, dimension: int) -> list[float]:
    """A deterministic unit vector seeded by the SHA-256 of text."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
    vector = np.random.default_rng(seed).standard_normal(dimension)
    return [float(x) for x in vector / np.linalg.norm(vector)]


def _split(content: str, chunks: int) -> list[str]:
    """content in at most `chunks` consecutive non-empty pieces."""
    if not content:
        return []
    count = max(1, min(chunks, len(content)))
    size, extra = divmod(len(content), count)
    pieces, start = [], 0
    for index in range(count):
        end = start + size + (1 if index < extra else 0)
        pieces.append(content[start:end])
        start = end
    return pieces


class ModelServer:
    """An OpenAI-compatible HTTP server on 127.0.0.1 whose answers each test scripts."""

    def __init__(
        self,
        *,
        model: str = DEFAULT_MODEL,
        delay: float = 0.0,
        responder: Responder = echo_responder,
        embedding_dimension: int = 32,
        embed: Callable[[str], list[float]] | None = None,
        embedding_delay: float = 0.0,
        embedding_order: Literal["index", "reversed"] = "index",
        json_schema_supported: bool = True,
        strict_parameters: bool = False,
        stream_usage: bool = True,
        context_window: int | None = None,
        cassette: Cassette | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.model = model
        self.delay = delay
        self.responder = responder
        self.embedding_dimension = embedding_dimension
        self.embed = embed or (lambda text: hashed_vector(text, self.embedding_dimension))
        self.embedding_delay = embedding_delay
        self.embedding_order = embedding_order
        self.json_schema_supported = json_schema_supported
        self.strict_parameters = strict_parameters
        self.stream_usage = stream_usage
        self.context_window = context_window
        self.replayer = Replayer(cassette) if cassette is not None else None
        self.requests: list[RecordedRequest] = []
        self._queues: dict[Endpoint, deque[Reply]] = {"chat": deque(), "embeddings": deque()}
        self._host, self._port = host, port
        self._runner: web.AppRunner | None = None
        self._closing: asyncio.Event | None = None
        self._base_url = ""

    # -- scripting ---------------------------------------------------------------------------------

    def enqueue(self, *replies: Reply | str, endpoint: Endpoint = "chat") -> None:
        """Queue replies for the next requests to `endpoint`, in order (a str is Reply.text(str))."""
        self._queues[endpoint].extend(Reply.from_value(reply) for reply in replies)

    @property
    def pending(self) -> int:
        """Queued chat replies not yet consumed."""
        return len(self._queues["chat"])

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.endpoint == "chat"]

    @property
    def embedding_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.endpoint == "embeddings"]

    # -- lifecycle ---------------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """ "http://127.0.0.1:PORT/v1" once started."""
        if not self._base_url:
            raise RuntimeError("ModelServer is not started")
        return self._base_url

    async def start(self) -> str:
        """Bind and serve; returns the base URL to give the openai client."""
        replaying = [self._replay] if self.replayer is not None else []
        app = web.Application(client_max_size=64 * 1024 * 1024, middlewares=replaying)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/embeddings", self._embeddings)
        app.router.add_get("/v1/models", self._models)
        app.router.add_get("/props", self._props)
        app.router.add_post("/_script/replies", self._script_replies)
        app.router.add_get("/_script/requests", self._script_requests)
        self._closing = asyncio.Event()
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self._host, self._port)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._base_url = f"http://{self._host}:{port}/v1"
        return self._base_url

    async def stop(self) -> None:
        """Release hanging handlers and close the server."""
        if self._closing is not None:
            self._closing.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> ModelServer:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    @contextlib.contextmanager
    def running_in_thread(self) -> Iterator[str]:
        """Serve from a daemon thread with its own event loop (for blocking or subprocess tests)."""
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, name="model-server", daemon=True)
        thread.start()
        try:
            yield asyncio.run_coroutine_threadsafe(self.start(), loop).result(timeout=10)
        finally:
            asyncio.run_coroutine_threadsafe(self.stop(), loop).result(timeout=10)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout=10)
            loop.close()

    # -- handlers ----------------------------------------------------------------------------------

    async def _pause(self, seconds: float) -> None:
        """Sleep, cut short when the server stops."""
        if seconds > 0 and self._closing is not None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), seconds)

    async def _next_reply(self, request: RecordedRequest) -> Reply:
        queue = self._queues[request.endpoint]
        if queue:
            return queue.popleft()
        if request.endpoint == "embeddings":
            return Reply()
        result = self.responder(request)
        if inspect.isawaitable(result):
            result = await result
        return Reply.from_value(result)

    async def _record(self, endpoint: Endpoint, request: web.Request) -> RecordedRequest | web.Response:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "request body is not JSON", "invalid_request_error")
        recorded = RecordedRequest(endpoint, body, dict(request.headers), time.monotonic())
        self.requests.append(recorded)
        return recorded

    async def _transport(self, reply: Reply, extra_delay: float) -> web.Response | None:
        """The reply's delay, hang, error or raw body; None when a normal answer should follow."""
        await self._pause(extra_delay + reply.delay)
        if reply.hang:
            await self._pause(HANG_LIMIT_SECONDS)
            return _error(503, "server stopped while hanging", "server_error")
        if reply.status >= 400:
            return _error(reply.status, reply.error, reply.error_type, reply.headers)
        if reply.raw_body is not None:
            return web.Response(text=reply.raw_body, content_type="application/json")
        return None

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        recorded = await self._record("chat", request)
        if isinstance(recorded, web.Response):
            return recorded
        rejection = self._reject(recorded)
        if rejection is not None:
            return rejection
        reply = await self._next_reply(recorded)
        early = await self._transport(reply, self.delay)
        if early is not None:
            return early
        usage = self._usage(recorded, reply)
        if recorded.stream:
            return await self._stream(request, recorded, reply, usage)
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.reasoning:
            message["reasoning_content"] = reply.reasoning
        choice = {"index": 0, "message": message, "finish_reason": reply.finish_reason, "logprobs": None}
        return web.json_response(self._envelope("chat.completion", [choice], usage))

    def _reject(self, request: RecordedRequest) -> web.Response | None:
        """The behaviour flags: strict parameters and missing json_schema support."""
        if self.strict_parameters and request.extra:
            return _error(*_as_error(Reply.unknown_parameter(sorted(request.extra)[0])))
        response_type = (request.response_format or {}).get("type")
        if not self.json_schema_supported and response_type == "json_schema":
            return _error(*_as_error(Reply.json_schema_rejected()))
        return None

    def _usage(self, request: RecordedRequest, reply: Reply) -> dict[str, int]:
        if reply.usage is not None:
            prompt, completion = reply.usage
        else:
            prompt = sum(count_tokens(str(m.get("content") or "")) for m in request.messages)
            completion = count_tokens(reply.content)
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    def _envelope(
        self, kind: str, choices: list[dict[str, Any]], usage: dict[str, int] | None
    ) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": kind,
            "created": int(time.time()),
            "model": self.model,
            "choices": choices,
            "usage": usage,
        }

    async def _stream(
        self, request: web.Request, recorded: RecordedRequest, reply: Reply, usage: dict[str, int]
    ) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)

        async def send(choices: list[dict[str, Any]], chunk_usage: dict[str, int] | None = None) -> None:
            chunk = self._envelope("chat.completion.chunk", choices, chunk_usage)
            await response.write(f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode())

        deltas: list[dict[str, Any]] = []
        if reply.reasoning:
            deltas.append({"role": "assistant", "reasoning_content": reply.reasoning})
        deltas += [{"role": "assistant", "content": piece} for piece in _split(reply.content, reply.chunks)]
        try:
            for sent, delta in enumerate(deltas):
                if reply.disconnect_after is not None and sent >= reply.disconnect_after:
                    if request.transport is not None:
                        request.transport.close()
                    return response
                if sent:
                    await self._pause(reply.chunk_delay)
                await send([{"index": 0, "delta": delta, "finish_reason": None}])
            if reply.omit_finish:
                await response.write_eof()
                return response
            await send([{"index": 0, "delta": {}, "finish_reason": reply.finish_reason}])
            if recorded.wants_usage and self.stream_usage:
                await send([], usage)
            await response.write(b"data: [DONE]\n\n")
            await response.write_eof()
        except ConnectionResetError:  # the client gave up (e.g. its read timeout fired)
            pass
        return response

    async def _embeddings(self, request: web.Request) -> web.Response:
        recorded = await self._record("embeddings", request)
        if isinstance(recorded, web.Response):
            return recorded
        reply = await self._next_reply(recorded)
        early = await self._transport(reply, self.embedding_delay)
        if early is not None:
            return early
        texts = recorded.inputs
        base64_wanted = recorded.body.get("encoding_format") == "base64"
        data = []
        for index, text in enumerate(texts):
            vector = self.embed(text)
            encoded: Any = vector
            if base64_wanted:
                encoded = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode("ascii")
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        if self.embedding_order == "reversed":
            data.reverse()
        tokens = sum(count_tokens(text) for text in texts)
        usage = {"prompt_tokens": tokens, "total_tokens": tokens}
        return web.json_response({"object": "list", "data": data, "model": self.model, "usage": usage})

    @web.middleware
    async def _replay(self, request: web.Request, handler: object) -> web.StreamResponse:
        """With a cassette, every path is answered from it (the scripted handlers never run)."""
        assert self.replayer is not None
        return await replay_response(self.replayer, request)

    async def _models(self, request: web.Request) -> web.Response:
        model = {"id": self.model, "object": "model", "created": 0, "owned_by": "tests"}
        return web.json_response({"object": "list", "data": [model]})

    async def _props(self, request: web.Request) -> web.Response:
        """llama.cpp's server properties (its per-slot context window) when `context_window` is set."""
        if self.context_window is None:
            return web.json_response({"error": "not found"}, status=404)
        settings = {"n_ctx": self.context_window, "model": self.model}
        return web.json_response({"default_generation_settings": settings, "total_slots": 1})

    async def _script_replies(self, request: web.Request) -> web.Response:
        endpoint: Endpoint = "embeddings" if request.query.get("endpoint") == "embeddings" else "chat"
        self.enqueue(*(Reply.from_value(item) for item in await request.json()), endpoint=endpoint)
        return web.json_response({"pending": len(self._queues[endpoint])})

    async def _script_requests(self, request: web.Request) -> web.Response:
        return web.json_response([r.to_dict() for r in self.requests])


def _as_error(reply: Reply) -> tuple[int, str, str]:
    return reply.status, reply.error, reply.error_type


def _error(
    status: int, message: str, error_type: str, headers: tuple[tuple[str, str], ...] = ()
) -> web.Response:
    body = {"error": {"message": message, "type": error_type, "param": None, "code": status}}
    return web.json_response(body, status=status, headers=dict(headers))


if __name__ == "__main__":  # python -m tests.model_server ...
    from tests.model_server_process import main

    main()
