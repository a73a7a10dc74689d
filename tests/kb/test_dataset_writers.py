"""One writer per dataset through the CLI: two `kb ingest` processes at once, waiting, --no-wait, readers."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from adapters.knowledge.factory import open_knowledge_base
from adapters.knowledge.locks.file_lock import FileWriterLocks
from bot.cli import main
from bot.settings import Settings
from core.models import SearchRequest
from tests.cli.cli_support import clean_env, kb, kb_popen, wait_for_line

PARKING = {
    f"parking-{n}.md": f"# Parking rule {n}\n\nCars park in lot {n}; the parking permit is renewed every March.\n"
    for n in (1, 2, 3)
}
BADGES = {
    f"badge-{n}.md": f"# Visitor badge {n}\n\nVisitors collect badge number {n} at the front desk.\n"
    for n in (1, 2)
}
HOLDER_COMMAND = "kb ingest holder-test --dataset team"


def folder(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def run_here(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """`kb ARGV` in this process (KB_HOME from the environment): exit code, stdout, stderr."""
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def search_here(capsys: pytest.CaptureFixture[str], query: str) -> dict[str, Any]:
    code, out, err = run_here(capsys, "search", query, "--dataset", "team", "--json")
    assert code == 0, err
    return json.loads(out)  # type: ignore[no-any-return]


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


def test_two_ingests_into_one_dataset_at_once_both_land_and_a_search_finds_both_folders(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two real `kb ingest` processes started together into one dataset: both succeed (the later one
    waited, saying for whom), the dataset checks sound, and searches find each folder's documents."""
    env = clean_env(tmp_path / "home")
    monkeypatch.setenv("KB_HOME", env["KB_HOME"])
    parking = folder(tmp_path / "parking", PARKING)
    badges = folder(tmp_path / "badges", BADGES)
    first = kb_popen(env, "ingest", str(parking), "--dataset", "team")
    second = kb_popen(env, "ingest", str(badges), "--dataset", "team")
    outputs = {
        name: process.communicate(timeout=120) for name, process in (("parking", first), ("badges", second))
    }
    assert first.returncode == 0, outputs["parking"][1]
    assert second.returncode == 0, outputs["badges"][1]
    assert "documents: 3 new" in outputs["parking"][0]
    assert "documents: 2 new" in outputs["badges"][0]
    pids = {"parking": first.pid, "badges": second.pid}
    for name, (_, stderr) in outputs.items():
        other = pids["badges" if name == "parking" else "parking"]
        for line in stderr.splitlines():
            if line.startswith("waiting for dataset «team»"):
                assert f"pid {other} on " in line and "kb ingest" in line  # waited for the other one

    code, out, err = run_here(capsys, "datasets", "check", "team")
    assert code == 0, out + err
    assert "5 documents, 5 live chunks" in out and "vector index   5 of 5 live chunks" in out
    found_parking = search_here(capsys, "where do cars park, parking permit")
    found_badges = search_here(capsys, "visitor badge at the front desk")
    assert found_parking["hits"][0]["document"].startswith("parking-")
    assert found_badges["hits"][0]["document"].startswith("badge-")


async def test_no_wait_fails_at_once_naming_the_holder_while_searches_keep_working(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the dataset is held: `kb ingest --no-wait` exits 1 at once with one error line naming the
    holder, so do docs disable and datasets drop with --no-wait, and `kb search` still answers."""
    home = tmp_path / "home"
    env = clean_env(home)
    monkeypatch.setenv("KB_HOME", str(home))
    parking = folder(tmp_path / "parking", PARKING)
    assert (await asyncio.to_thread(run_here, capsys, "ingest", str(parking), "--dataset", "team"))[0] == 0
    locks = FileWriterLocks(home / "locks", command=HOLDER_COMMAND)
    async with locks.hold("team"):
        started = time.monotonic()
        refused = await asyncio.to_thread(kb, env, "ingest", str(parking), "--dataset", "team", "--no-wait")
        assert time.monotonic() - started < 30
        assert refused.returncode == 1
        assert refused.stdout == ""
        assert (
            error_lines(refused.stderr) == refused.stderr.strip().splitlines()
        )  # nothing but the error line
        [line] = error_lines(refused.stderr)
        assert f"pid {os.getpid()} on " in line and f"`{HOLDER_COMMAND}`" in line and "--no-wait" in line

        for argv in (
            ["docs", "disable", "parking-1.md", "--dataset", "team", "--no-wait"],
            ["datasets", "drop", "team", "--yes", "--no-wait"],
            ["datasets", "rebuild", "team", "--no-wait"],
        ):
            code, _, err = await asyncio.to_thread(run_here, capsys, *argv)
            assert code == 1, argv
            assert f"pid {os.getpid()} on " in err and err.startswith("error: "), argv

        found = await asyncio.to_thread(search_here, capsys, "where do cars park")
        assert found["hits"] and found["hits"][0]["document"].startswith("parking-")
        code, out, _ = await asyncio.to_thread(run_here, capsys, "datasets", "list")
        assert code == 0 and "team" in out


async def test_a_waiting_writer_names_the_holder_and_a_reader_kept_open_sees_what_it_wrote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the dataset held (by this test, as another writer would), `kb ingest` prints one line naming
    the holder's pid, command and start and keeps waiting; once the holder lets go it ingests, and a
    knowledge base opened before (as `kb serve` keeps one) finds the new documents in every mode:
    embedded Chroma is reopened after another process's calls."""
    home = tmp_path / "home"
    env = clean_env(home)
    monkeypatch.setenv("KB_HOME", str(home))
    parking = folder(tmp_path / "parking", PARKING)
    assert (await asyncio.to_thread(run_here, capsys, "ingest", str(parking), "--dataset", "team"))[0] == 0
    badges = folder(tmp_path / "badges", BADGES)
    locks = FileWriterLocks(home / "locks", command=HOLDER_COMMAND)
    async with open_knowledge_base(Settings()) as reader:

        async def documents(mode: str) -> set[str]:
            request = SearchRequest(
                query="visitor badge front desk", datasets=("team",), mode=mode, limit=10, threshold=0.0
            )
            return {hit.document_name for hit in await reader.search(request)}

        assert not any(name.startswith("badge-") for name in await documents("embedding"))
        async with locks.hold("team"):
            waiting = kb_popen(env, "ingest", str(badges), "--dataset", "team")
            try:
                lines = await asyncio.to_thread(wait_for_line, waiting.stderr, "waiting for dataset «team»")
                assert f"pid {os.getpid()} on " in lines[-1] and f"`{HOLDER_COMMAND}`, since " in lines[-1]
                await asyncio.sleep(1.0)
                assert waiting.poll() is None  # still waiting while the lock is held
                assert len(await reader.list_documents("team")) == 3  # readers never wait
            except BaseException:
                waiting.kill()
                raise
        out, err = await asyncio.to_thread(waiting.communicate, timeout=120)
        assert waiting.returncode == 0, err
        assert "documents: 2 new" in out
        for mode in ("embedding", "keywords", "blend"):
            assert {"badge-1", "badge-2"} <= await documents(mode), mode
        assert len(await reader.list_documents("team")) == 5
