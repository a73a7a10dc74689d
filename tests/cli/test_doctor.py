"""`kb doctor` as a subprocess: every check against a real store, Chroma, model server and mock Slack API."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.knowledge.chroma.catalog import DATASET_KIND
from bot.sample_kb import SAMPLE_KB_DIR
from tests.cli.cli_support import clean_env, kb, prepare_home
from tests.model_server import ModelServer
from tests.slack.mock_slack_api import MockSlackApi


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A KB_HOME with the sample handbook ingested as "handbook"."""
    return prepare_home(
        tmp_path_factory.mktemp("doctor_home"), ("ingest", str(SAMPLE_KB_DIR), "--dataset", "handbook")
    )


@pytest.fixture
async def slack_api() -> AsyncIterator[MockSlackApi]:
    api = await MockSlackApi().start()
    try:
        yield api
    finally:
        await api.close()


def _closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _model_env(base_url: str, model: str) -> dict[str, str]:
    return {"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "test-key", "KB_CHAT_MODEL": model}


def _lines(stdout: str) -> dict[str, str]:
    """Each check's line by its name ("✓ slack scopes: …" under "slack scopes")."""
    found: dict[str, str] = {}
    for line in stdout.splitlines():
        if line[:2] in ("✓ ", "✗ ", "– ") and ":" in line:
            found[line[2:].split(":", 1)[0]] = line
    return found


async def test_a_healthy_setup_passes_every_check_and_exits_0(
    home: Path, model_server: ModelServer, slack_api: MockSlackApi
) -> None:
    """Store, Chroma and its dataset, the model endpoint (names, a completion, json_schema) and Slack's
    auth.test with the manifest's scopes all pass; the unset classifier is skipped, not failed."""
    env = clean_env(
        home,
        **_model_env(model_server.base_url, model_server.model),
        SLACK_BOT_TOKEN="xoxb-test",
        SLACK_API_URL=slack_api.url,
    )
    done = await asyncio.to_thread(kb, env, "doctor")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = _lines(done.stdout)
    for name in ("settings", "conversation store", "chroma", "dataset handbook", "model endpoint"):
        assert lines[name].startswith("✓ "), lines[name]
    assert lines["model names"] == "✓ model names: test-model listed"
    assert lines["completion"].startswith("✓ completion: test-model answers")
    assert lines["json mode"] == "✓ json mode: test-model accepts json_schema"
    assert lines["slack"].startswith("✓ slack: auth.test")
    assert lines["slack scopes"].startswith("✓ slack scopes: all 13 scopes")
    assert lines["classifier"].startswith("– classifier: KB_CLASSIFIER_URL is not set")
    assert "keyword index agrees" in lines["dataset handbook"]
    assert done.stdout.rstrip().endswith("0 failed, 1 skipped")
    sent = [request.body.get("max_tokens") for request in model_server.chat_requests]
    assert sent[0] == 2  # the two-token completion


async def test_a_model_endpoint_that_is_down_fails_with_what_to_do(home: Path) -> None:
    """Nothing listening at OPENAI_BASE_URL: ✗ model endpoint naming the URL and the fix, exit 1; --json
    says the same."""
    env = clean_env(home, **_model_env(_closed_port_url(), "qwen"))
    done = await asyncio.to_thread(kb, env, "doctor")
    assert done.returncode == 1
    line = _lines(done.stdout)["model endpoint"]
    assert line.startswith("✗ model endpoint: http://127.0.0.1:") and "start the model server" in line
    assert _lines(done.stdout)["dataset handbook"].startswith("✓ ")
    report = json.loads((await asyncio.to_thread(kb, env, "doctor", "--json")).stdout)
    assert report["ok"] is False
    [endpoint] = [check for check in report["checks"] if check["name"] == "model endpoint"]
    assert endpoint["status"] == "failed" and "OPENAI_BASE_URL" in endpoint["fix"]


async def test_each_misconfiguration_is_its_own_failed_line(home: Path, slack_api: MockSlackApi) -> None:
    """A bad value, a dataset built with another embedder, a server without json_schema and a model name
    it does not list, a token missing a scope, an unreachable classifier: each one ✗ line with its fix."""
    slack_api.granted_scopes = tuple(
        scope for scope in slack_api.granted_scopes or () if scope != "users:read"
    )
    async with ModelServer(json_schema_supported=False) as server:
        env = clean_env(
            home,
            **_model_env(server.base_url, "no-such-model"),
            KB_AGENT_MAX_ROUNDS="9",
            KB_EMBEDDING_MODEL="multilingual-e5-small",
            SLACK_BOT_TOKEN="xoxb-test",
            SLACK_API_URL=slack_api.url,
            KB_CLASSIFIER_URL=_closed_port_url().removesuffix("/v1"),
        )
        done = await asyncio.to_thread(kb, env, "doctor")
    assert done.returncode == 1
    lines = _lines(done.stdout)
    assert lines["settings"].startswith("✗ settings: setting KB_AGENT_MAX_ROUNDS=9 is outside 1..6")
    assert lines["dataset handbook"].startswith(
        "✗ dataset handbook: built with use-multilingual-v3, KB_EMBEDDING_MODEL is multilingual-e5-small"
    )
    assert lines["model names"].startswith("✗ model names: no-such-model not listed — set KB_CHAT_MODEL")
    assert lines["json mode"] == "✓ json mode: no-such-model accepts json_object"
    assert lines["slack scopes"].startswith("✗ slack scopes: missing users:read")
    assert lines["classifier"].startswith("✗ classifier: http://127.0.0.1:")
    assert "Traceback" not in done.stdout + done.stderr


def test_a_dataset_whose_parts_disagree_fails_with_the_command_that_names_what_differs(
    tmp_path: Path,
) -> None:
    """A chunk record deleted behind the catalog's back, then a keyword index saved for another state: each
    is a ✗ dataset line (counts and signatures, not ids) pointing at `kb datasets check`, exit 1."""
    import chromadb

    home = prepare_home(tmp_path / "home", ("ingest", str(SAMPLE_KB_DIR), "--dataset", "handbook"))
    env = clean_env(home)
    keyword_meta = next((home / "keywords").rglob("manifest.json"))
    saved = json.loads(keyword_meta.read_text(encoding="utf-8"))
    keyword_meta.write_text(json.dumps({**saved, "signature": "another state"}), encoding="utf-8")
    done = kb(env, "doctor")
    line = _lines(done.stdout)["dataset handbook"]
    assert done.returncode == 1 and line.startswith(
        "✗ dataset handbook: the keyword index was saved for another"
    )
    assert "`kb datasets check handbook`" in line

    keyword_meta.write_text(json.dumps(saved), encoding="utf-8")
    client = chromadb.PersistentClient(path=str(home / "chroma"))
    chunks = next(  # the chunk collection (the catalog is a collection of the dataset too)
        c
        for c in client.list_collections()
        if (c.metadata or {}).get("dataset") == "handbook" and (c.metadata or {}).get("kind") == DATASET_KIND
    )
    total = chunks.count()
    chunks.delete(ids=chunks.get(limit=1, include=[])["ids"])
    done = kb(env, "doctor")
    line = _lines(done.stdout)["dataset handbook"]
    assert done.returncode == 1
    assert f"the collection holds {total - 1} chunks, the catalog lists {total} chunks" in line
