"""A real `chroma run` server (shipped in the chromadb wheel) on a free port, for the server-mode tests."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from adapters.knowledge.factory import make_chroma_client


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def chroma_command() -> str | None:
    """The chroma CLI shipped in the chromadb wheel (beside this interpreter, else on PATH); None without it."""
    executable = Path(sys.executable).parent / "chroma"
    return str(executable) if executable.exists() else shutil.which("chroma")


@contextmanager
def running_chroma(data: Path, log_path: Path, *, within: float = 30) -> Iterator[tuple[str, int]]:
    """`chroma run` over the data folder on a free port: (its URL once it answers, its pid), stopped after."""
    command = chroma_command()
    if command is None:
        raise RuntimeError("the chroma CLI (shipped in the chromadb wheel) is not installed")
    port = _free_port()
    log = log_path.open("wb")
    server = subprocess.Popen(
        [command, "run", "--path", str(data), "--port", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + within
        while True:
            try:
                make_chroma_client(chroma_path=data, chroma_url=url).heartbeat()
                break
            except Exception:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise
                time.sleep(0.2)
        yield url, server.pid
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()


@contextmanager
def chroma_server(folder: Path) -> Iterator[str]:
    """`chroma run` over folder / "server-data" on a free port: its URL once it answers, stopped after."""
    if chroma_command() is None:
        pytest.fail("the chroma CLI (shipped in the chromadb wheel) is not installed")
    with running_chroma(folder / "server-data", folder / "chroma-server.log") as (url, _):
        yield url
