"""Ingest progress on stderr: a byte-based bar in a terminal, a plain line at least every 10 s otherwise.

Progress is measured in bytes of the files (known before anything is read, and advancing inside a big
file as its chunks are stored), with files and chunks beside it, so one 30 MB file does not sit at
"0/1" and small files at the start do not make the estimate absurd. Without a terminal (a log, CI) a
line is printed at once and then at least every INTERVAL seconds, even while one long write runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import TextIO

from tqdm import tqdm

from core.knowledge.ingest_plan import IngestProgress

INTERVAL = 10.0  # seconds between plain progress lines
ETA_AFTER = 3.0  # seconds of work before a remaining-time estimate is shown
ETA_SHARE = 0.02  # ... and this share of the bytes done (a few small files first predict nothing)
_MB = 1024 * 1024


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds + 0.5))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def _eta(progress: IngestProgress, elapsed: float) -> str:
    remaining = progress.bytes_total - progress.bytes_done
    if progress.bytes_total and remaining <= 0:
        return "finishing"
    if elapsed >= ETA_AFTER and progress.bytes_done >= ETA_SHARE * progress.bytes_total > 0:
        return f"ETA {_duration(remaining * elapsed / progress.bytes_done)}"
    return "ETA …"


def progress_line(progress: IngestProgress, elapsed: float, *, with_bytes: bool = True) -> str:
    """One plain progress line: files, chunks, rate, bytes and the time left (once ETA_AFTER seconds
    and ETA_SHARE of the bytes are behind, so the estimate rests on real work)."""
    rate = progress.chunks / elapsed if elapsed > 0 else 0.0
    parts = [
        f"{progress.files_done}/{progress.files_total} files",
        f"{progress.chunks:,} chunks",
        f"{rate:,.0f} chunks/s",
    ]
    if with_bytes:
        parts.append(f"{progress.bytes_done / _MB:.1f} of {progress.bytes_total / _MB:.1f} MB")
    parts.append(_eta(progress, elapsed))
    return " · ".join(parts)


class IngestReporter:
    """Shows IngestProgress on a stream: tqdm when interactive, else progress_line every INTERVAL s."""

    def __init__(
        self,
        stream: TextIO,
        *,
        interactive: bool,
        interval: float = INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.interactive = interactive
        self.interval = interval
        self.clock = clock
        self.started = clock()
        self.last_line = 0.0
        self.progress = IngestProgress(0, 0, 0, 0, 0)
        self.bar: tqdm | None = None
        self._ticker: asyncio.Task[None] | None = None

    def start(self, *, files: int, total_bytes: int, dataset: str) -> None:
        """Show the run at once: the bar, or a first line naming what will be read."""
        self.started = self.clock()
        self.progress = IngestProgress(0, files, 0, total_bytes, 0)
        if self.interactive:
            self.bar = tqdm(
                total=total_bytes,
                unit="B",
                unit_scale=True,
                unit_divisor=1024,
                file=self.stream,
                desc=dataset,
                dynamic_ncols=True,
                # tqdm's own estimate would rest on the first small files; ours waits for real work
                bar_format="{desc} {percentage:3.0f}%|{bar}| {n_fmt}B/{total_fmt}B · {postfix}",
            )
            self._postfix()
        else:
            print(
                f"ingest: {files} files, {total_bytes / _MB:.1f} MB into dataset «{dataset}»",
                file=self.stream,
                flush=True,
            )
            self.last_line = self.clock()

    def update(self, progress: IngestProgress) -> None:
        """Record the latest progress (the bar moves; a plain line waits for its interval)."""
        previous, self.progress = self.progress, progress
        if self.bar is not None:
            self.bar.update(max(0, progress.bytes_done - previous.bytes_done))
            self._postfix()
        else:
            self.tick()

    def _postfix(self) -> None:
        if self.bar is not None:
            progress = self.progress
            self.bar.set_postfix_str(
                f"{progress.files_done}/{progress.files_total} files · {progress.chunks:,} chunks",
                refresh=False,
            )

    def tick(self) -> None:
        """Redraw the bar (rate and time left move on), or print a plain line when the interval passed."""
        if self.bar is not None:
            self._postfix()
            self.bar.refresh()
        elif self.clock() - self.last_line >= self.interval:
            line = progress_line(self.progress, self.clock() - self.started)
            print(f"ingest: {line}", file=self.stream, flush=True)
            self.last_line = self.clock()

    def note(self, text: str) -> None:
        """A message between progress output (a skipped file)."""
        if self.bar is not None:
            tqdm.write(text, file=self.stream)
        else:
            print(text, file=self.stream, flush=True)

    async def _tick_forever(self) -> None:
        while True:
            await asyncio.sleep(min(1.0, self.interval))
            self.tick()

    def __enter__(self) -> IngestReporter:
        with contextlib.suppress(RuntimeError):  # no running loop: updates alone drive the output
            self._ticker = asyncio.get_running_loop().create_task(self._tick_forever())
        return self

    def __exit__(self, *exc: object) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
        if self.bar is not None:
            self.bar.close()
