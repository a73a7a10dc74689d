"""Record a cassette: the fixed question set through the real bot against a live OpenAI-compatible server.

    python -m tests.replay.record --base-url http://127.0.0.1:19200/v1 --model qwen2.5-coder-0.5b \\
        --out tests/replay/cassettes/qwen2.5-0.5b.json

It starts the recording proxy (tests.replay.proxy) in front of --base-url, runs every conversation of
tests/replay/question_set.py through the composition `kb ask` uses (tests.replay.session: the sample
handbook, the offline embedder, a temporary KB_HOME) with OPENAI_BASE_URL pointing at the proxy, and
writes every request and response, with a header naming the model, the server, its build, the date and
the question set. KB_*/OPENAI_* variables of the caller's environment are ignored: the settings are the
session's own. It never downloads anything.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp

from tests.replay.cassette import Cassette
from tests.replay.proxy import RecordingProxy, upstream_origin
from tests.replay.question_set import QUESTION_SET, QUESTION_SET_NAME, question_set_digest
from tests.replay.session import SESSION_SETTINGS, TurnOutcome, run_question_set, session_settings

# Recording waits for a slow CPU model instead of timing out: a cut-off call would make the cassette
# depend on the machine's speed.
RECORD_TIMEOUTS: dict[str, dict[str, float]] = {
    "model": {"timeout": 600.0, "first_token_timeout": 1800.0, "deadline": 600.0},
    "answer": {"deadline": 600.0},
}


async def _get_json(session: aiohttp.ClientSession, url: str) -> tuple[dict[str, Any] | None, str]:
    """The JSON at url (None when it is not JSON or not 200) and the Server header."""
    try:
        async with session.get(url) as response:
            server = response.headers.get("Server", "")
            if response.status != 200:
                return None, server
            data = await response.json(content_type=None)
            return (data if isinstance(data, dict) else None), server
    except (aiohttp.ClientError, ValueError):
        return None, ""


async def describe_server(base_url: str) -> dict[str, Any]:
    """Model and server facts for the header, from GET /v1/models and (llama.cpp) GET /props.

    Raises ConnectionError when /v1/models does not answer.
    """
    origin = upstream_origin(base_url)
    timeout = aiohttp.ClientTimeout(total=15)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        models, server = await _get_json(session, f"{origin}/v1/models")
        if models is None:
            raise ConnectionError(f"no OpenAI-compatible server answers GET {origin}/v1/models")
        props, _ = await _get_json(session, f"{origin}/props")
    listed = (models.get("data") or [{}])[0]
    meta = listed.get("meta") or {}
    facts: dict[str, Any] = {"server_model": listed.get("id", ""), "n_ctx": meta.get("n_ctx")}
    if props is not None and "default_generation_settings" in props:
        facts["server"] = "llama.cpp llama-server"
        facts["server_version"] = props.get("build_info", "")
        facts["n_ctx"] = (props.get("default_generation_settings") or {}).get("n_ctx", facts["n_ctx"])
        facts["model_type"] = props.get("model_ftype", "")
    else:
        facts["server"] = server or listed.get("owned_by", "") or "OpenAI-compatible server"
    if meta.get("n_params"):
        facts["n_params"] = meta["n_params"]
    return facts


def _print_turn(outcome: TurnOutcome) -> None:
    record = outcome.record
    if record is None:
        status = f"FAILED {outcome.failed.code if outcome.failed else ''}"
    else:
        details = record.details
        status = f"{details.engine} · notice={bool(details.notice)}"
        if details.answer_error:
            status += f" · answer_error={details.answer_error[:80]}"
    print(f"  {outcome.conversation.id}[{outcome.turn}] {outcome.question} → {status}", file=sys.stderr)


def _clear_environment() -> None:
    for name in list(os.environ):
        if name.startswith(("KB_", "OPENAI_")):
            del os.environ[name]


async def record(base_url: str, model: str, out: Path) -> Cassette:
    """Run the question set through the proxy and return the cassette (written to out by main)."""
    facts = await describe_server(base_url)
    started = time.monotonic()
    async with RecordingProxy(base_url) as proxy:
        with tempfile.TemporaryDirectory(prefix="kb-record-") as home:
            settings = session_settings(base_url=proxy.base_url, model=model, home=Path(home))
            settings = settings.replace(**RECORD_TIMEOUTS)
            outcomes = await run_question_set(settings, progress=_print_turn)
    seconds = round(time.monotonic() - started, 1)
    header = {
        "model": model,
        **facts,
        "recorded_at": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "question_set": {
            "name": QUESTION_SET_NAME,
            "sha256": question_set_digest(),
            "conversations": len(QUESTION_SET),
        },
        "settings": SESSION_SETTINGS,
        "recording_seconds": seconds,
        "turns": len(outcomes),
        "failed_turns": sum(o.record is None for o in outcomes),
        "command": f"python -m tests.replay.record --base-url {base_url} --model {model} --out {out}",
    }
    if proxy.disconnected:
        header["client_disconnected"] = proxy.disconnected
    return Cassette(header, proxy.interactions)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.replay.record",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--base-url", required=True, help="the live server, e.g. http://127.0.0.1:19200/v1")
    parser.add_argument("--model", required=True, help="the model name the bot sends (KB_CHAT_MODEL)")
    parser.add_argument("--out", type=Path, required=True, help="the cassette to write")
    args = parser.parse_args(argv)
    _clear_environment()
    try:
        cassette = asyncio.run(record(args.base_url, args.model, args.out))
    except ConnectionError as exc:
        print(f"error: {exc}; start one first, e.g. scripts/llama-server.sh MODEL.gguf", file=sys.stderr)
        return 1
    cassette.save(args.out)
    size = args.out.stat().st_size
    header = cassette.header
    print(
        f"wrote {args.out}: {len(cassette.interactions)} interactions, {size / 1024:.0f} KB, "
        f"{header['turns']} turns ({header['failed_turns']} failed) in {header['recording_seconds']} s",
        file=sys.stderr,
    )
    if header.get("client_disconnected"):
        print(
            "warning: the client gave up on some calls while recording (timeouts); record again",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
