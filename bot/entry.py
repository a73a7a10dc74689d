"""The `kb` console script: Ctrl-C while the program is still importing ends with one line, like later on.

Importing the command line (pydantic, Chroma, jieba) takes a second or two; a SIGINT then arrives before
bot/cli/outcome.py can turn it into its one line, so this module, which imports nothing heavy itself,
catches it around the import too, and remembers it: a KeyboardInterrupt raised inside a C extension's callback
(pydantic-core building a validator) is printed as "Exception ignored" and lost, and the import goes on.
"""

from __future__ import annotations

import os
import signal
import sys
import threading

EXIT_INTERRUPTED = 130


def _interrupted_word() -> str:
    """ "interrupted" in the locale's language, without importing the catalogues (they may be half-loaded)."""
    for name in ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        value = os.environ.get(name, "")
        if value:
            return "已中断。" if value.lower().startswith("zh") else "interrupted"
    return "interrupted"


def run() -> int:
    """Import and run the command line; one line and exit 130 for a Ctrl-C that arrives while importing."""
    seen = threading.Event()

    def note_interrupt(signum: int, frame: object) -> None:
        seen.set()
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, note_interrupt)
    try:
        from bot.cli import main

        signal.signal(signal.SIGINT, previous)
        if seen.is_set():  # raised inside a C callback that swallowed it ("Exception ignored in: …")
            raise KeyboardInterrupt
        return main()
    except KeyboardInterrupt:
        if "-v" in sys.argv[1:] or "--verbose" in sys.argv[1:]:
            raise
        print(f"\n{_interrupted_word()}", file=sys.stderr)
        if threading.main_thread() is threading.current_thread():
            # Interrupted inside an import, the interpreter remembers an unhandled KeyboardInterrupt and
            # would end by re-sending SIGINT to itself (exit -2) whatever we return: leave at once.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(EXIT_INTERRUPTED)
        return EXIT_INTERRUPTED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(run())
