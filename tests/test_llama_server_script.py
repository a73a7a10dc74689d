"""scripts/llama-server.sh starts llama-server with the CPU settings, and says clearly what is missing.

A fake llama-server (a shell script that prints its arguments and OMP_WAIT_POLICY) stands in for llama.cpp.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "llama-server.sh"
FAKE = """#!/bin/sh
echo "OMP_WAIT_POLICY=$OMP_WAIT_POLICY"
for arg in "$@"; do echo "arg:$arg"; done
exit "${FAKE_EXIT:-0}"
"""


@pytest.fixture
def fake_bin(tmp_path: Path) -> Path:
    folder = tmp_path / "bin"
    folder.mkdir()
    fake = folder / "llama-server"
    fake.write_text(FAKE, encoding="utf-8")
    fake.chmod(0o755)
    return folder


@pytest.fixture
def gguf(tmp_path: Path) -> Path:
    path = tmp_path / "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
    path.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\x00" * 16)
    return path


def run(*args: str, path: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "LLAMA_SERVER"}
    environment.update(PATH=path, **env)
    return subprocess.run(
        ["bash", str(SCRIPT), *args], capture_output=True, text=True, env=environment, timeout=30
    )


def _args(stdout: str) -> list[str]:
    return [line.removeprefix("arg:") for line in stdout.splitlines() if line.startswith("arg:")]


def test_it_passes_the_cpu_settings_and_prints_the_kb_settings(fake_bin: Path, gguf: Path) -> None:
    """Model, loopback, port, context 4096, one slot, threads = cores, --jinja; OMP passive."""
    result = run(str(gguf), "--port", "19333", path=f"{fake_bin}:/usr/bin:/bin")
    assert result.returncode == 0, result.stderr
    cores = str(os.cpu_count())
    expected = ["-m", str(gguf), "--host", "127.0.0.1", "--port", "19333", "-c", "4096", "-np", "1"]
    assert _args(result.stdout) == [*expected, "-t", cores, "--jinja"]
    assert "OMP_WAIT_POLICY=PASSIVE" in result.stdout
    assert "export OPENAI_BASE_URL=http://127.0.0.1:19333/v1" in result.stdout
    assert "export KB_CHAT_MODEL=qwen2.5-coder-0.5b-instruct-q4_k_m" in result.stdout


def test_llama_server_env_context_threads_and_extra_arguments(
    fake_bin: Path, gguf: Path, tmp_path: Path
) -> None:
    """LLAMA_SERVER wins over PATH; --ctx, --threads and what follows -- are passed on."""
    result = run(
        str(gguf),
        "--ctx",
        "8192",
        "--threads",
        "3",
        "--",
        "--no-repack",
        path="/usr/bin:/bin",
        LLAMA_SERVER=str(fake_bin / "llama-server"),
    )
    assert result.returncode == 0, result.stderr
    args = _args(result.stdout)
    assert args[args.index("-c") + 1] == "8192" and args[args.index("-t") + 1] == "3"
    assert args[-1] == "--no-repack"


def test_a_missing_model_file_is_a_clear_error_and_nothing_is_downloaded(
    fake_bin: Path, tmp_path: Path
) -> None:
    """A path with no file is refused (exit 2) before llama-server runs; nothing is fetched."""
    result = run(str(tmp_path / "absent.gguf"), path=f"{fake_bin}:/usr/bin:/bin")
    assert result.returncode == 2
    assert "no model file at" in result.stderr and "never downloads" in result.stderr
    assert "arg:" not in result.stdout


def test_a_file_that_is_not_gguf_is_refused(fake_bin: Path, tmp_path: Path) -> None:
    """A file without the GGUF magic bytes is refused (exit 2)."""
    other = tmp_path / "model.gguf"
    other.write_text("<html>not a model</html>", encoding="utf-8")
    result = run(str(other), path=f"{fake_bin}:/usr/bin:/bin")
    assert result.returncode == 2 and "is not a GGUF file" in result.stderr


def test_a_missing_binary_names_path_and_llama_server(gguf: Path, tmp_path: Path) -> None:
    """No llama-server on PATH, or a wrong LLAMA_SERVER: exit 127 with what to set."""
    result = run(str(gguf), path="/usr/bin:/bin")
    assert result.returncode == 127
    assert "llama-server not found" in result.stderr and "LLAMA_SERVER=" in result.stderr
    missing = run(str(gguf), path="/usr/bin:/bin", LLAMA_SERVER=str(tmp_path / "nope"))
    assert missing.returncode == 127 and f"at LLAMA_SERVER={tmp_path / 'nope'}" in missing.stderr


def test_a_segfault_suggests_no_repack(fake_bin: Path, gguf: Path) -> None:
    """The crash seen here (AMX in a VM) gets a hint naming the fix."""
    result = run(str(gguf), path=f"{fake_bin}:/usr/bin:/bin", FAKE_EXIT="139")
    assert result.returncode == 139 and "-- --no-repack" in result.stderr
