"""Two `kb serve` processes (two machines: their own KB_HOME) on one PostgreSQL database and one Chroma server:
a chunk one of them syncs is found by keyword search through the other, which is not restarted."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

import aiohttp
import asyncpg
import pytest

from tests.adapters.postgres_support import POSTGRES_URL, isolated_schema
from tests.cli.cli_support import clean_env
from tests.slack.mock_slack_api import MockSlackApi
from tests.slack.serve_support import event_body, signed_headers, start_kb_serve
from tests.sources.test_slack_channel_sync import add_channel_source, kb_async


async def _stop(server: asyncio.subprocess.Process) -> tuple[str, str]:
    server.send_signal(signal.SIGTERM)
    stdout, stderr = await asyncio.wait_for(server.communicate(), 60)
    return stdout.decode(), stderr.decode()


@pytest.mark.slow
async def test_a_chunk_synced_by_one_instance_is_found_by_keywords_through_the_other_without_a_restart(
    tmp_path: Path, chroma_url: str
) -> None:
    """Instance B (keyword search) is answering from a dataset; instance A, started after a Slack channel source
    was added, syncs it; B's answer to a mention then quotes the synced thread, its keyword index having taken
    A's new segment from the database (fetched into B's folder) rather than re-reading texts from Chroma."""
    async with isolated_schema() as schema:
        database = f"{POSTGRES_URL}?search_path={schema}"
        mock = await MockSlackApi().start()
        mock.add_channel("C200", members=["U1", "U2"], name="it-help")
        root = mock.say("C200", "U1", "How do I get VPN access from home?")
        mock.say("C200", "U2", "Request it in the IT portal, then install GlobalProtect.", thread_ts=root)
        shared = {
            "KB_MODEL": "extractive",
            "KB_CHROMA_URL": chroma_url,
            "KB_DATABASE_URL": database,
            "KB_SEARCH_MODE": "keywords",
            "SLACK_BOT_TOKEN": "xoxb-test",
        }
        machine_a = clean_env(tmp_path / "a", **shared)
        machine_b = clean_env(tmp_path / "b", **shared)
        notes = tmp_path / "notes"
        notes.mkdir()
        (notes / "parking.md").write_text("# Parking\n\nVisitors park on level two of the garage.\n")
        code, _, err = await kb_async(machine_b, "ingest", str(notes), "--dataset", "slack")
        assert code == 0, err
        second, base = await start_kb_serve(
            machine_b, mock
        )  # looks for due sources now, then not for a minute
        first: asyncio.subprocess.Process | None = None
        try:
            code, _, err = await add_channel_source(machine_a, "it", "C200", "slack", every="1h")
            assert code == 0, err
            first, _ = await start_kb_serve(machine_a, mock)  # the source never ran: A syncs it at start
            for _ in range(300):
                code, out, _ = await kb_async(machine_a, "sources", "list", "--json")
                if json.loads(out)[0]["last_sync"]:
                    break
                await asyncio.sleep(0.2)
            else:
                pytest.fail("instance A did not sync the source")
            mention = event_body(
                "Ev1", type="app_mention", text="<@UBOT> how do I get VPN access?", ts="1710.000100"
            )
            async with (
                aiohttp.ClientSession() as http,
                http.post(f"{base}/slack/events", data=mention, headers=signed_headers(mention)) as response,
            ):
                assert response.status == 200
            await mock.wait_for(
                lambda: "GlobalProtect" in "".join(m.block_text() for m in mock.thread("C1", "1710.000100")),
                within=60,
            )
            assert second.returncode is None  # answered by the same process, never restarted
        finally:
            out_b, err_b = await _stop(second)
            out_a, err_a = ("", "") if first is None else await _stop(first)
            await mock.close()
        assert second.returncode == 0, err_b
        assert first is not None and first.returncode == 0, err_a
        assert "kb serve: source it: documents: 1 new" in out_a
        assert "source it" not in out_b  # B synced nothing: the chunk came through A
        connection = await asyncpg.connect(database)
        try:
            manifest = json.loads(await connection.fetchval("SELECT manifest FROM kb_keyword_manifests"))
        finally:
            await connection.close()
        [folder] = (tmp_path / "b" / "keywords").iterdir()
        fetched = {path.name for path in (folder / "segments").iterdir()}
        assert len(manifest["segments"]) == 2 and set(manifest["segments"]) <= fetched
