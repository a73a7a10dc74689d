"""Ingest progress: measured in bytes and chunks (moving inside one big file), a line at once and at least
every 10 s without a terminal, and no remaining-time estimate before there is real work to base it on."""

from __future__ import annotations

import asyncio
import io
import subprocess
import sys
from pathlib import Path

from bot.cli.knowledge.ingest_progress import IngestReporter, progress_line
from core.knowledge.ingest_plan import IngestProgress
from tests.cli.cli_support import ROOT, clean_env
from tests.kb.kb_support import CountingEmbedder, ingest_one, make_kb

MB = 1024 * 1024


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_without_a_terminal_a_line_comes_at_once_then_every_interval() -> None:
    """The first line names the run at start; later lines wait for the interval and carry files, chunks,
    rate, bytes and the time left."""
    stream, clock = io.StringIO(), Clock()
    reporter = IngestReporter(stream, interactive=False, interval=10.0, clock=clock)
    reporter.start(files=10, total_bytes=2 * MB, dataset="laws")
    assert stream.getvalue() == "ingest: 10 files, 2.0 MB into dataset «laws»\n"
    clock.now += 5
    reporter.update(IngestProgress(2, 10, MB // 4, 2 * MB, 60))
    assert stream.getvalue().count("\n") == 1
    clock.now += 5
    reporter.update(IngestProgress(5, 10, MB, 2 * MB, 120))
    assert stream.getvalue().splitlines()[-1] == (
        "ingest: 5/10 files · 120 chunks · 12 chunks/s · 1.0 of 2.0 MB · ETA 0:10"
    )


def test_the_remaining_time_waits_for_real_work() -> None:
    """No estimate in the first seconds or before 2 % of the bytes are done; "finishing" at the end."""
    early = IngestProgress(3, 385, 4_000, 9 * MB, 0)
    assert progress_line(early, 10.0).endswith("ETA …")
    assert progress_line(IngestProgress(100, 385, 3 * MB, 9 * MB, 4000), 2.0).endswith("ETA …")
    assert progress_line(IngestProgress(100, 385, 3 * MB, 9 * MB, 4000), 30.0).endswith("ETA 1:00")
    assert progress_line(IngestProgress(385, 385, 9 * MB, 9 * MB, 12000), 90.0).endswith("finishing")


async def test_the_ticker_prints_even_when_no_progress_arrives() -> None:
    """During one long write (no update at all) plain lines still come every interval."""
    stream = io.StringIO()
    with IngestReporter(stream, interactive=False, interval=0.05) as reporter:
        reporter.start(files=1, total_bytes=MB, dataset="d")
        await asyncio.sleep(0.4)
    assert stream.getvalue().count("ingest: 0/1 files · 0 chunks") >= 3


def test_in_a_terminal_the_bar_counts_bytes_inside_a_file() -> None:
    """The bar's total is the bytes to read; a single big file moves it before the file is done."""
    stream = io.StringIO()
    reporter = IngestReporter(stream, interactive=True)
    reporter.start(files=1, total_bytes=30 * MB, dataset="big")
    reporter.update(IngestProgress(0, 1, 12 * MB, 30 * MB, 5120))
    assert reporter.bar is not None and (reporter.bar.n, reporter.bar.total) == (12 * MB, 30 * MB)
    assert "0/1 files · 5,120 chunks" in str(reporter.bar.postfix)
    reporter.__exit__()


async def test_progress_moves_inside_one_document_as_its_chunks_are_stored(tmp_path: Path) -> None:
    """With writes of 16 chunks, a 100-chunk document reports growing bytes and chunks before it is done."""
    path = tmp_path / "big.md"
    path.write_text(
        "# 大文件\n\n" + "\n\n".join(f"## 第{i}节\n\n" + f"第{i}段内容。" * 60 for i in range(100)),
        encoding="utf-8",
    )
    embedder = CountingEmbedder()
    store = make_kb(tmp_path / "home", embedder, write_batch=16)
    seen: list[IngestProgress] = []
    await ingest_one(store, path, embedder, on_progress=seen.append)
    await store.close()
    inside = [p for p in seen if p.files_done == 0]
    assert len(inside) >= 6
    assert [p.chunks for p in inside] == sorted(p.chunks for p in inside) and inside[0].chunks == 16
    assert 0 < inside[0].bytes_done < inside[-1].bytes_done <= path.stat().st_size
    assert seen[-1] == IngestProgress(1, 1, path.stat().st_size, path.stat().st_size, 100)


def test_kb_ingest_without_a_terminal_announces_the_run_first(tmp_path: Path) -> None:
    """Piped stderr: the first line (files, size, dataset) comes before anything else is reported."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text("# A\n\n正文。\n", encoding="utf-8")
    (folder / "b.pdf").write_bytes(b"%PDF-1.4")
    result = subprocess.run(
        [sys.executable, "-m", "bot", "ingest", str(folder), "--dataset", "d"],
        cwd=ROOT,
        env=clean_env(tmp_path / "home"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert lines[0] == "ingest: 2 files, 0.0 MB into dataset «d»"
    assert lines[1].startswith(f"warning: skipped {folder / 'b.pdf'}: corrupt PDF")
