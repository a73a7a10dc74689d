"""Running `kb` as a user does: a subprocess with a clean environment, or an interactive one on a pty."""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
import pty
import select
import signal
import subprocess
import sys
import termios
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
_PREFIXES = ("KB_", "OPENAI_", "SLACK_")


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment without any KB_/OPENAI_/SLACK_ variable, with KB_HOME and the extras set."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_PREFIXES)}
    env.update({"KB_HOME": str(home), "LANG": "C.UTF-8", **extra})
    env.pop("LC_ALL", None)
    return env


def kb(env: dict[str, str], *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m bot ARGS` to completion, output captured."""
    return subprocess.run(
        [sys.executable, "-m", "bot", *args],
        cwd=ROOT,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _default_sigint() -> None:  # pragma: no cover - runs in the child
    """Ctrl-C as in a terminal: a run started in the background (`cmd &`, nohup) passes SIGINT on ignored,
    and Python keeps an ignored SIGINT ignored, so the signal tests would see nothing happen."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def kb_popen(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    """`python -m bot ARGS` started, stdout and stderr piped (for signals sent while it runs)."""
    return subprocess.Popen(
        [sys.executable, "-m", "bot", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )


def wait_for_line(stream: object, fragment: str, timeout: float = 60.0) -> list[str]:
    """Lines read from a text stream until one contains fragment (all lines read so far)."""
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = stream.readline()  # type: ignore[attr-defined]
        if not line:
            break
        lines.append(line)
        if fragment in line:
            return lines
    raise AssertionError(f"{fragment!r} not seen in {lines}")


def _take_terminal() -> None:  # pragma: no cover - runs in the child
    """Make the pty (the child's stdin) its controlling terminal, so Ctrl-C sends it SIGINT."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)
    _default_sigint()


class PtySession:
    """`kb ARGS` on a pseudo-terminal, as in a real terminal: keys typed, the screen read, exit waited."""

    def __init__(self, env: dict[str, str], *args: str) -> None:
        self.fd, terminal = pty.openpty()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bot", *args],
            cwd=ROOT,
            env={**env, "TERM": "dumb"},
            stdin=terminal,
            stdout=terminal,
            stderr=terminal,
            start_new_session=True,
            preexec_fn=_take_terminal,
        )
        os.close(terminal)
        self.pid = self.process.pid
        self.screen = ""

    def read_until(self, fragment: str, timeout: float = 60.0) -> str:
        """Everything shown until fragment appears (AssertionError after timeout)."""
        deadline = time.monotonic() + timeout
        while fragment not in self.screen:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"{fragment!r} not shown; screen: {self.screen!r}")
            ready, _, _ = select.select([self.fd], [], [], remaining)
            if ready:
                try:
                    data = os.read(self.fd, 4096)
                except OSError:
                    data = b""
                if not data:
                    raise AssertionError(f"{fragment!r} not shown before exit; screen: {self.screen!r}")
                self.screen += data.decode("utf-8", "replace")
        return self.screen

    def type(self, keys: str, *, after: float = 0.0) -> None:
        """Type keys, `after` seconds from now (a person never types within a microsecond of a prompt;
        a signal that lands before readline waits for input is only seen on the next key)."""
        time.sleep(after)
        os.write(self.fd, keys.encode("utf-8"))

    def wait(self, timeout: float = 15.0) -> int:
        """The exit code (130-style for a signal death), reading the screen meanwhile."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            code = self.process.poll()
            if code is not None:
                self._drain()
                os.close(self.fd)
                return code
            self._drain(0.1)
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()
        os.close(self.fd)
        raise AssertionError(f"kb did not exit within {timeout} s; screen: {self.screen!r}")

    def _drain(self, wait: float = 0.0) -> None:
        while True:
            ready, _, _ = select.select([self.fd], [], [], wait)
            if not ready:
                return
            try:
                data = os.read(self.fd, 4096)
            except OSError:
                return
            if not data:
                return
            self.screen += data.decode("utf-8", "replace")
            wait = 0.0


def run_main(capsys: Any, *argv: str, stdin: str = "") -> tuple[int, str, str]:
    """`kb ARGV` in this process (the same entry point, much cheaper than a subprocess): code, out, err."""
    from bot.cli import main

    saved = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        code = main(list(argv))
    finally:
        sys.stdin = saved
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def prepare_home(home: Path, *commands: Sequence[str]) -> Path:
    """Run `kb` commands in this process against home (for module fixtures: no capsys there); each must
    exit 0. The environment is restored afterwards."""
    from bot.cli import main

    with pytest.MonkeyPatch.context() as patch:
        for name in list(os.environ):
            if name.startswith(_PREFIXES):
                patch.delenv(name)
        patch.setenv("KB_HOME", str(home))
        for command in commands:
            assert main(list(command)) == 0, command
    return home


@contextlib.contextmanager
def scripted_model(home: Path, responder: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The OpenAI-compatible test server answering with responder, and `kb` in this process pointed at it
    with home as KB_HOME (the variables are restored by monkeypatch)."""
    from tests.model_server import ModelServer

    server = ModelServer(responder=responder)
    with server.running_in_thread() as base_url:
        for name, value in (
            ("KB_HOME", str(home)),
            ("LANG", "C.UTF-8"),
            ("OPENAI_BASE_URL", base_url),
            ("OPENAI_API_KEY", "k"),
            ("KB_CHAT_MODEL", server.model),
        ):
            monkeypatch.setenv(name, value)
        yield
