"""Output whose reader may go away: `kb ingest … | head` drops what the closed pipe cannot take and
the command still finishes its work (the data matters more than the lines about it)."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any, TextIO


class ReaderMayLeave:
    """A text stream that, once its pipe is closed, points its descriptor at /dev/null and drops writes."""

    def __init__(self, inner: TextIO) -> None:
        self._inner = inner
        self.gone = False

    def write(self, text: str) -> int:
        """Write through; after a broken pipe, swallow the text (its length is returned, as if written)."""
        if not self.gone:
            try:
                return self._inner.write(text)
            except BrokenPipeError:
                self._leave()
        return len(text)

    def flush(self) -> None:
        """Flush through, unless the reader has gone."""
        if not self.gone:
            try:
                self._inner.flush()
            except BrokenPipeError:
                self._leave()

    def _leave(self) -> None:
        self.gone = True
        with contextlib.suppress(OSError, ValueError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._inner.fileno())  # the buffered rest and the final flush go nowhere
            os.close(devnull)

    def __getattr__(self, name: str) -> Any:  # isatty, fileno, encoding… as the inner stream's
        return getattr(self._inner, name)


@contextlib.contextmanager
def output_may_close() -> Iterator[None]:
    """While the block runs, stdout and stderr survive their reader leaving."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = ReaderMayLeave(saved[0]), ReaderMayLeave(saved[1])
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
