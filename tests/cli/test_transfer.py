"""`kb export` / `kb import` as subprocesses: a conversation moves from SQLite to PostgreSQL and goes on there."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from adapters.store.backends import open_store
from adapters.store.transfer import export_lines, import_rows, read_lines
from bot.sample_kb import SAMPLE_KB_DIR
from core.models import ConversationKey, RecordOpening
from tests.adapters.postgres_support import POSTGRES_URL, isolated_schema
from tests.cli.cli_support import clean_env, kb, prepare_home


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A KB_HOME with the sample handbook ingested as "sample"."""
    return prepare_home(
        tmp_path_factory.mktemp("transfer_home"), ("ingest", str(SAMPLE_KB_DIR), "--dataset", "sample")
    )


async def _kb(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    done = await asyncio.to_thread(kb, env, *args)
    return done.returncode, done.stdout, done.stderr


async def test_a_conversation_moves_to_postgresql_and_its_follow_up_keeps_the_topic(
    home: Path, tmp_path: Path
) -> None:
    """Asked, compacted and given a source on SQLite, exported, imported into PostgreSQL (twice: the second adds nothing):
    the summary and watermark came along, a follow-up there is rewritten into the conversation's subject, and
    its record id follows the imported ones."""
    env = clean_env(home, KB_CONTEXT_RECENT_TOKENS="512")  # three turns are over budget: compaction runs
    asked = []
    for question in ("Java 有哪些基本数据类型?", "那它们各自占用多少内存?", "Java 的 int 占几个字节?"):
        name = ("--name",) if not asked else ("--conversation",)
        code, out, err = await _kb(env, "ask", question, *name, "moving", "--json")
        assert code == 0, err
        asked.append(json.loads(out)["id"])
    code, out, err = await _kb(env, "compact", "moving")
    assert code == 0 and out.startswith("compacted: revision 1, 2 turns in the summary"), out + err
    website = ("--kind", "website", "--dataset", "web", "--url", "http://127.0.0.1:9/", "--every", "1h")
    assert (await _kb(env, "sources", "add", "site", *website))[0] == 0
    dump = tmp_path / "history.jsonl"
    code, out, err = await _kb(env, "export", str(dump))
    assert code == 0, err
    assert out.startswith("exported 1 conversations, 3 records, 1 conversation_context, 1 sources to ")
    async with isolated_schema() as schema:
        moved = {**env, "KB_DATABASE_URL": f"{POSTGRES_URL}?search_path={schema}"}
        code, out, err = await _kb(moved, "import", str(dump))
        assert code == 0, err
        assert out.startswith("imported 1 conversations, 3 records, 1 conversation_context, 1 sources;")
        code, out, _ = await _kb(moved, "import", str(dump))
        assert code == 0
        assert "imported 0 conversations, 0 records, 0 conversation_context, 0 sources" in out
        assert "already present: 1 conversations, 3 records, 1 conversation_context, 1 sources" in out
        code, sources, _ = await _kb(moved, "sources", "list")
        assert code == 0 and "site  website  → web  every 1h" in sources
        code, context, err = await _kb(moved, "context", "moving")
        assert code == 0, err
        assert f"watermark: record #{asked[1]}" in context and "问：Java 有哪些基本数据类型?" in context
        code, later, err = await _kb(
            moved, "ask", "那它们的默认值是什么?", "--conversation", "moving", "--json"
        )
        assert code == 0, err
        record = json.loads(later)
        assert record["id"] == asked[-1] + 1
        assert record["status"] == "answered" and "Java" in record["rewritten"]


async def test_a_store_with_another_history_is_refused_and_a_bad_file_is_one_line(
    home: Path, tmp_path: Path
) -> None:
    """Record 1 of the file and record 1 of a store that asked something else clash: exit 2, one line, nothing
    written (the store still has its own conversation only); a file that is not an export is refused too."""
    source = clean_env(home)
    other = clean_env(home, KB_DATABASE_URL=f"sqlite:///{tmp_path / 'other.sqlite3'}")  # its own history
    assert (await _kb(source, "ask", "年假有几天?", "--name", "mine"))[0] == 0
    dump = tmp_path / "mine.jsonl"
    assert (await _kb(source, "export", str(dump)))[0] == 0
    assert (await _kb(other, "ask", "病假需要什么证明?", "--name", "theirs"))[0] == 0
    code, out, err = await _kb(other, "import", str(dump))
    assert code == 2 and out == ""
    assert err.startswith("error: ") and "Nothing was written" in err and "Traceback" not in err
    assert (await _kb(other, "history", "mine"))[0] != 0  # the clashing import added no conversation
    assert (await _kb(other, "history", "theirs"))[0] == 0
    not_an_export = tmp_path / "notes.jsonl"
    not_an_export.write_text('{"hello": 1}\n', "utf-8")
    code, _, err = await _kb(other, "import", str(not_an_export))
    assert code == 2 and "not a `kb export` file" in err


async def _store_with_conversations(path: Path, count: int) -> None:
    async with await open_store(f"sqlite:///{path}") as store:
        for number in range(count):
            opening = RecordOpening(
                conversation=ConversationKey("cli", channel_id=f"c{number}"), question=f"q{number}?"
            )
            await store.open_record(opening)


async def test_export_and_import_page_through_a_store_larger_than_a_page(tmp_path: Path) -> None:
    """Five conversations moved two rows at a time (real SQLite both ends): every row is exported once, the
    import adds them all, and importing the same file again finds them all present."""
    await _store_with_conversations(tmp_path / "a.sqlite3", 5)
    async with await open_store(f"sqlite:///{tmp_path / 'a.sqlite3'}") as source:
        lines = [line async for _, line in export_lines(source.database, page=2)]
    rows = read_lines(lines)
    assert sorted(table.name for table, _ in rows).count("records") == 5
    async with await open_store(f"sqlite:///{tmp_path / 'b.sqlite3'}") as target:
        first = await import_rows(target.database, rows, page=2)
        again = await import_rows(target.database, rows, page=2)
        assert first.added == {"conversations": 5, "records": 5} and first.present == {}
        assert again.present == first.added and again.added == {}
        assert [r.question for r in await target.answered_since(0.0)] == []  # pending, as they were
        assert len(await target.pending_records()) == 5
