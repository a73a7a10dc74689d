"""A tiny aiohttp server for the HTTP adapter tests: scripted JSON replies, recorded request bodies."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import web


class ScriptedServer:
    """Answers each route with a scripted (status, body, delay); records the JSON bodies it received."""

    def __init__(self) -> None:
        self.replies: dict[str, tuple[int, Any, float]] = {}
        self.requests: list[tuple[str, str, Any]] = []
        self.base_url = ""

    def reply(self, path: str, body: Any, *, status: int = 200, delay: float = 0.0) -> None:
        self.replies[path] = (status, body, delay)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json() if request.can_read_body else None
        self.requests.append((request.method, request.path, body))
        status, payload, delay = self.replies.get(request.path, (404, {"error": "no route"}, 0.0))
        if delay:
            await asyncio.sleep(delay)
        if isinstance(payload, str):
            return web.Response(status=status, text=payload)
        return web.json_response(payload, status=status)


@asynccontextmanager
async def scripted_server() -> AsyncIterator[ScriptedServer]:
    """A ScriptedServer listening on 127.0.0.1 on a free port for the duration of the block."""
    server = ScriptedServer()
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", server._handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    server.base_url = f"http://127.0.0.1:{port}"
    try:
        yield server
    finally:
        await runner.cleanup()
