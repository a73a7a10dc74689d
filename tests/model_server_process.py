"""Running the scripted model server in another process: `python -m tests.model_server`, spawn_model_server.

The Slack and CLI end-to-end tests start `kb` as a subprocess; they can point OPENAI_BASE_URL at a
ModelServer in the test's own loop, at `ModelServer.running_in_thread()`, or at a separate process::

    with spawn_model_server("--script", str(script_file), "--delay", "0.2") as base_url:
        ...  # base_url is "http://127.0.0.1:PORT/v1"

Script file (JSON): {"replies": [<Reply.to_dict()> or "text", ...], "default": <reply for every later
call>, "delay": 0.2, "model": "test-model", "embedding_dimension": 32, "json_schema_supported": true,
"strict_parameters": false}. While it runs, POST /_script/replies (a JSON list of replies;
?endpoint=embeddings for the embeddings queue) adds replies and GET /_script/requests lists the
requests received.

Record and replay (tests/replay): `--record CASSETTE.json --upstream URL` runs the recording proxy in
front of a real server instead (the cassette is written on SIGTERM/SIGINT); `--replay CASSETTE.json`
answers from a cassette.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.model_script import Reply
from tests.model_server import DEFAULT_MODEL, ModelServer
from tests.replay.cassette import Cassette
from tests.replay.proxy import RecordingProxy


def _server_from_script(
    path: Path | None, *, model: str, delay: float, dimension: int, port: int
) -> ModelServer:
    script: dict[str, Any] = json.loads(path.read_text(encoding="utf-8")) if path else {}
    default = script.get("default")
    server = ModelServer(
        model=script.get("model", model),
        delay=float(script.get("delay", delay)),
        embedding_dimension=int(script.get("embedding_dimension", dimension)),
        json_schema_supported=bool(script.get("json_schema_supported", True)),
        strict_parameters=bool(script.get("strict_parameters", False)),
        port=port,
    )
    if default is not None:
        fixed = Reply.from_value(default)
        server.responder = lambda request: fixed
    server.enqueue(*(Reply.from_value(item) for item in script.get("replies", [])))
    return server


async def _serve(server: ModelServer | RecordingProxy) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    async with server:
        print(f"MODEL_SERVER_URL={server.base_url}", flush=True)
        await stop.wait()


async def _record(upstream: str, out: Path, port: int) -> None:
    proxy = RecordingProxy(upstream, port=port)
    try:
        await _serve(proxy)
    finally:
        header = {"upstream": proxy.upstream, "recorded_with": "python -m tests.model_server --record"}
        Cassette(header, proxy.interactions).save(out)
        print(f"wrote {len(proxy.interactions)} interactions to {out}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> None:
    """Command line: serve a scripted ModelServer until SIGTERM/SIGINT."""
    parser = argparse.ArgumentParser(prog="python -m tests.model_server", description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", type=Path, default=None)
    parser.add_argument("--model", default=DEFAULT_MODEL)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--dimension", type=int, default=32)
    parser.add_argument("--record", type=Path, metavar="CASSETTE", help="record a real server (--upstream)")
    parser.add_argument("--upstream", help="the real server to record, e.g. http://127.0.0.1:19200")
    parser.add_argument("--replay", type=Path, metavar="CASSETTE", help="answer from a recorded cassette")
    args = parser.parse_args(argv)
    if args.record:
        if not args.upstream:
            parser.error("--record needs --upstream URL")
        asyncio.run(_record(args.upstream, args.record, args.port))
        return
    if args.replay:
        cassette = Cassette.load(args.replay)
        asyncio.run(_serve(ModelServer(cassette=cassette, port=args.port)))
        return
    server = _server_from_script(
        args.script, model=args.model, delay=args.delay, dimension=args.dimension, port=args.port
    )
    asyncio.run(_serve(server))


@contextlib.contextmanager
def spawn_model_server(*args: str, cwd: Path | None = None) -> Iterator[str]:
    """Run `python -m tests.model_server ARGS` in a subprocess; yields its base URL, stops it on exit."""
    root = cwd or Path(__file__).resolve().parents[1]
    command = [sys.executable, "-m", "tests.model_server", *args]
    process = subprocess.Popen(command, cwd=root, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        if not line.startswith("MODEL_SERVER_URL="):
            raise RuntimeError(f"model server did not start: {line!r}")
        yield line.removeprefix("MODEL_SERVER_URL=")
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()
