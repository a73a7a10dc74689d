"""A worker process's result handed to the process that asked through a file: the asking process, whose
event loop waits while embedded Chroma holds the GIL for a write, reads the file when it can instead of
draining a pipe's pickled payload at the worker's pace (the embedding process, the tokenising pool)."""

from __future__ import annotations

import os
import pickle
import tempfile
from typing import Any


def result_to_file(result: Any, directory: str) -> str:
    """In the worker: result pickled into a new file under directory; its path."""
    descriptor, path = tempfile.mkstemp(dir=directory, suffix=".pickle")
    with os.fdopen(descriptor, "wb") as handle:
        pickle.dump(result, handle, protocol=pickle.HIGHEST_PROTOCOL)
    return path


def load_and_remove(path: str) -> Any:
    """In the asking process: the result a worker left at path, the file removed."""
    try:
        with open(path, "rb") as handle:
            return pickle.load(handle)
    finally:
        os.unlink(path)
