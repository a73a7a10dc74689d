"""KB_HOME made ready before a command touches it: created when missing, or refused in one line naming why.

Every store (conversations, embedded Chroma, the dataset locks) lives under KB_HOME, so a path that is a
file, sits under a file, or cannot be written is reported here once, before a library reports it as a
traceback of its own.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from bot.cli.texts import phrase
from core.errors import InvalidInput

_NOT_WRITABLE = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})


def refusal_cause(error: OSError) -> str:
    """The catalogue key of why a folder could not be made: a file, under a file, not writable, or other."""
    if isinstance(error, FileExistsError):
        return "error.home_is_a_file"
    if isinstance(error, NotADirectoryError) or error.errno == errno.ENOTDIR:
        return "error.home_under_a_file"
    if error.errno in _NOT_WRITABLE:
        return "error.home_not_writable"
    return "error.home_os_error"


def prepare_home(home: Path) -> None:
    """Create KB_HOME (and its parents) when missing; InvalidInput naming the path and cause when unusable."""
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InvalidInput(
            phrase(refusal_cause(error), path=str(home), detail=error.strerror or repr(error)),
            detail=f"KB_HOME {home}: {error!r}",
        ) from error
    if not os.access(home, os.W_OK | os.X_OK):
        raise InvalidInput(phrase("error.home_not_writable", path=str(home), detail=""))
