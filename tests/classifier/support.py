"""Helpers for the classifier tests: a tiny trained model and the real service on a loopback port."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

from multihop_classifier.cli import main as classifier_main
from multihop_classifier.service import create_app

TINY_COUNT = 400  # examples: enough for a confident head, trained in about two seconds


def build_tiny_model(root: Path, *, extra_train_args: tuple[str, ...] = ()) -> tuple[Path, Path]:
    """Generate, train, evaluate and export a tiny model under root; returns (run dir, export dir)."""
    data, run, models = root / "seed.jsonl", root / "run", root / "models"
    assert classifier_main(["generate", "--out", str(data), "--count", str(TINY_COUNT)]) == 0
    assert classifier_main(["train", "--data", str(data), "--out", str(run), *extra_train_args]) == 0
    assert classifier_main(["eval", "--model", str(run)]) == 0
    assert classifier_main(["export", "--run", str(run), "--out", str(models)]) == 0
    return run, models


class Service:
    """The running service: its base URL and a client session to call it."""

    def __init__(self, base_url: str, session: aiohttp.ClientSession) -> None:
        self.base_url = base_url
        self.session = session

    async def call(
        self, method: str, path: str, body: Any = None, *, raw: str | None = None
    ) -> tuple[int, Any]:
        """(status, JSON body) of one request; ``raw`` sends a body that is not JSON."""
        kwargs: dict[str, Any] = {"data": raw} if raw is not None else {"json": body}
        async with self.session.request(method, self.base_url + path, **kwargs) as response:
            return response.status, await response.json(content_type=None)

    async def wait_until_loaded(self) -> dict[str, Any]:
        """Poll /health until the model has loaded or failed to (status no longer 'loading'), 30 s at most."""
        async with asyncio.timeout(30):
            while True:
                _, body = await self.call("GET", "/health")
                if body["status"] != "loading":
                    return dict(body)
                await asyncio.sleep(0.05)


@asynccontextmanager
async def running_service(model_dir: Path | None, **options: Any) -> AsyncIterator[Service]:
    """The real aiohttp service on 127.0.0.1 (free port), waited on until its model load finished."""
    runner = web.AppRunner(create_app(model_dir, **options))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        async with aiohttp.ClientSession() as session:
            service = Service(f"http://127.0.0.1:{port}", session)
            await service.wait_until_loaded()
            yield service
    finally:
        await runner.cleanup()
