"""The one error path of the `kb` command line: domain errors, Ctrl-C and broken pipes become one line.

Every command runs through :func:`run_command`. A domain error (core.errors.KbError) prints
``error: <message>`` in the user's language and exits 2 for bad input or 1 for an unavailable service;
Ctrl-C prints one line (naming the record it marked interrupted, when there is one) and exits 130; a
closed stdout (``kb trace 1 | head``) ends quietly. Tracebacks appear only with ``-v``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import inspect
import logging
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bot.cli.texts import t
from core.errors import InvalidInput, KbError, NotAllowed, NotFound, StoreUnavailable
from core.text import detect_language

log = logging.getLogger("kb")
EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_INTERRUPTED = 0, 1, 2, 130
_BAD_INPUT_CODES = frozenset({"no_knowledge_base", "duplicate", "model_rejected"})  # a setting to fix


@dataclass
class CommandState:
    """What a running command knows that its error line needs: the user's language, the open record."""

    lang: str  # "zh", "en", or "both" when the user's words carry no language (a blank question)
    record_id: int | None = None

    def use_language_of(self, text: str) -> None:
        """Answer in the language of the user's own words (a question, a query) when there are some."""
        if any(ch.isalpha() for ch in text or ""):
            self.lang = detect_language(text)


_STATE: contextvars.ContextVar[CommandState] = contextvars.ContextVar("kb_command_state")


def environment_lang(environ: dict[str, str] | None = None) -> str:
    """zh when the locale (LC_ALL, LC_MESSAGES, LANG, LANGUAGE) is Chinese, else en."""
    env = os.environ if environ is None else environ
    for name in ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        value = env.get(name, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def current_state() -> CommandState:
    """The state of the command running now (a fresh one outside run_command)."""
    try:
        return _STATE.get()
    except LookupError:
        state = CommandState(lang=environment_lang())
        _STATE.set(state)
        return state


def exit_code(error: KbError) -> int:
    """2 for bad input (invalid, unknown, not allowed), 1 for a service that failed or is unavailable."""
    if isinstance(error, InvalidInput | NotFound | NotAllowed) or error.code in _BAD_INPUT_CODES:
        return EXIT_BAD_INPUT
    return EXIT_FAILED


def error_line(error: KbError, lang: str) -> str:
    """`error: <message>`; an unavailable store also names what could not be reached (no password)."""
    text = error.in_both_languages() if lang == "both" else error.message(lang)
    if isinstance(error, StoreUnavailable) and str(error) != error.message("en"):
        text = f"{text} (KB_DATABASE_URL: {error})"
    return f"error: {text}"


def interrupted_line(state: CommandState) -> str:
    """The one line printed on Ctrl-C."""
    record = state.record_id
    if record is None:
        return t("interrupted", state.lang)
    return t("interrupted_record", state.lang, record=record)


def _silence_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so the interpreter's final flush stays quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _quiet_late_threads() -> None:
    """After a Ctrl-C, a store's worker thread (aiosqlite) may finish its query after the event loop closed
    and fail handing the result back ("Event loop is closed"); that is not the user's error, so it prints
    nothing. Any other thread error still goes to the usual hook."""
    usual = threading.excepthook

    def hook(failure: threading.ExceptHookArgs) -> None:
        if isinstance(failure.exc_value, RuntimeError) and "Event loop is closed" in str(failure.exc_value):
            return
        usual(failure)

    threading.excepthook = hook


def run_command(
    handler: Callable[[argparse.Namespace, Any], Any], args: argparse.Namespace, settings: Any
) -> int:
    """Run a command handler (sync or async) and turn its outcome into an exit code (module docstring)."""
    verbose = bool(getattr(args, "verbose", False))
    state = CommandState(lang=environment_lang())
    token = _STATE.set(state)
    try:
        result = handler(args, settings)
        if inspect.isawaitable(result):
            result = asyncio.run(result)  # type: ignore[arg-type]
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's final flush
        return int(result or 0)
    except KbError as error:
        if verbose:
            log.exception("command failed")
        print(error_line(error, state.lang), file=sys.stderr)
        return exit_code(error)
    except KeyboardInterrupt:
        if verbose:
            log.exception("interrupted")
        else:
            _quiet_late_threads()
        print(f"\n{interrupted_line(state)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_OK
    except Exception as error:  # a bug: one line, the traceback only with -v
        if verbose:
            raise
        detail = f"{type(error).__name__}: {error}"
        print(t("internal_error", state.lang, detail=detail), file=sys.stderr)
        return EXIT_FAILED
    finally:
        _STATE.reset(token)
