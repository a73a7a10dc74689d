"""The HTTP side of record and replay (aiohttp).

- RecordingProxy forwards every request to a real OpenAI-compatible server (llama.cpp's llama-server,
  vLLM, Ollama, ...) and keeps each request and response as an Interaction; a streamed response is passed
  on event by event as it arrives (so the client's timeouts see the real server's pace) and every event
  is kept.
- replay_response answers one request from a Replayer: the recorded body, or the recorded events in
  order; a request that matches nothing gets HTTP 400 with the Mismatch message.

`python -m tests.model_server --record CASSETTE.json --upstream URL` runs the proxy on its own (the
cassette is written when it stops); `--replay CASSETTE.json` serves a cassette.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp import web

from tests.replay.cassette import Interaction, Mismatch, RecordedResponse, Replayer

log = logging.getLogger(__name__)
SSE = "text/event-stream"


def upstream_origin(url: str) -> str:
    """http://host:port from a server URL or an OpenAI base URL (".../v1")."""
    url = url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


def parse_body(raw: bytes) -> Any:
    """A JSON body as its value, any other body as its text, no body as None."""
    if not raw:
        return None
    text = raw.decode("utf-8", errors="replace")
    try:
        return json.loads(text)
    except ValueError:
        return text


def _media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def _event_data(line: str) -> Any:
    """One event line: the parsed JSON of `data: {...}`, else the line itself."""
    if line.startswith("data:"):
        payload = line[len("data:") :].strip()
        if payload.startswith("{"):
            with contextlib.suppress(ValueError):
                return json.loads(payload)
    return line


@dataclass(frozen=True, slots=True)
class Timing:
    """When one exchange started, sent its first content delta (streams only) and ended (time.monotonic)."""

    started: float
    first_content: float | None
    ended: float


def _has_content(chunk: Any) -> bool:
    """Whether a streamed chunk carries answer text."""
    if not isinstance(chunk, dict):
        return False
    return any((choice.get("delta") or {}).get("content") for choice in chunk.get("choices") or [])


class RecordingProxy:
    """A local OpenAI-compatible endpoint that forwards to `upstream` and records every exchange.

    `interactions` go into a cassette; `timings` (same order) are for benchmarks.
    """

    def __init__(self, upstream: str, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self.upstream = upstream_origin(upstream)
        self.interactions: list[Interaction] = []
        self.timings: list[Timing] = []
        self.disconnected: list[int] = []  # interactions whose client left before the end
        self._host, self._port = host, port
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self._base_url = ""

    @property
    def base_url(self) -> str:
        if not self._base_url:
            raise RuntimeError("RecordingProxy is not started")
        return self._base_url

    async def start(self) -> str:
        """Bind and serve; returns the base URL (".../v1") to give the client."""
        self._session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=None))
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/{path:.*}", self._forward)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self._host, self._port)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._base_url = f"http://{self._host}:{port}/v1"
        return self._base_url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> RecordingProxy:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    async def _forward(self, request: web.Request) -> web.StreamResponse:
        assert self._session is not None
        raw = await request.read()
        headers = {"Content-Type": request.headers.get("Content-Type", "application/json")} if raw else {}
        started = time.monotonic()
        first_content: float | None = None
        async with self._session.request(
            request.method, self.upstream + request.path_qs, data=raw or None, headers=headers
        ) as upstream:
            content_type = upstream.headers.get("Content-Type", "")
            if _media_type(content_type) == SSE:
                response, recorded, first_content = await self._relay_stream(request, upstream, content_type)
            else:
                body = await upstream.read()
                recorded = RecordedResponse(upstream.status, _media_type(content_type), body=parse_body(body))
                response = web.Response(body=body, status=upstream.status, content_type=recorded.content_type)
        ended = time.monotonic()
        seconds = round(ended - started, 3)
        self.timings.append(Timing(started, first_content, ended))
        self.interactions.append(
            Interaction(request.method, request.path_qs, parse_body(raw), recorded, seconds=seconds)
        )
        return response

    async def _relay_stream(
        self, request: web.Request, upstream: aiohttp.ClientResponse, content_type: str
    ) -> tuple[web.StreamResponse, RecordedResponse, float | None]:
        """Pass each event on as it arrives and keep it; a client that leaves does not cut the record."""
        response = web.StreamResponse(
            status=upstream.status, headers={"Content-Type": content_type, "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        chunks: list[Any] = []
        client_gone = False
        first_content: float | None = None
        async for raw_line in upstream.content:
            line = raw_line.decode("utf-8").strip()
            if line:
                chunks.append(_event_data(line))
                if first_content is None and _has_content(chunks[-1]):
                    first_content = time.monotonic()
            if not client_gone:
                try:
                    await response.write(raw_line)
                except (ConnectionResetError, aiohttp.ClientConnectionResetError):
                    client_gone = True
        if client_gone:
            self.disconnected.append(len(self.interactions))
            log.warning("the client left %s before the stream ended", request.path)
        else:
            with contextlib.suppress(ConnectionResetError, aiohttp.ClientConnectionResetError):
                await response.write_eof()
        return response, RecordedResponse(upstream.status, SSE, chunks=tuple(chunks)), first_content


async def replay_response(replayer: Replayer, request: web.Request) -> web.StreamResponse:
    """The recorded answer to this request, or HTTP 400 naming the closest recorded request."""
    body = parse_body(await request.read())
    found = replayer.match(request.method, request.path_qs, body)
    if isinstance(found, Mismatch):
        error = {"message": found.message, "type": "invalid_request_error", "param": None, "code": 400}
        return web.json_response({"error": error}, status=400)
    recorded = found.response
    if not recorded.is_stream:
        if isinstance(recorded.body, str):
            return web.Response(
                text=recorded.body, status=recorded.status, content_type=recorded.content_type
            )
        text = json.dumps(recorded.body, ensure_ascii=False)
        return web.Response(
            text=text, status=recorded.status, content_type=recorded.content_type or "application/json"
        )
    response = web.StreamResponse(
        status=recorded.status, headers={"Content-Type": SSE, "Cache-Control": "no-cache"}
    )
    await response.prepare(request)
    try:
        for line in recorded.sse_lines():
            await response.write(line)
        await response.write_eof()
    except ConnectionResetError:  # the client gave up
        pass
    return response
