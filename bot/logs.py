"""Log lines as text (the default) or as one JSON object per line, with the question they belong to.

The JSON line has `ts` (UTC, ISO 8601), `level`, `logger`, `event`, and when known `record_id` and
`conversation_id` (core.answering.log_context), `phase` and `duration` (core.answering.run_ledger), `error_type`.
Logged values can quote questions, answers or documents, so by default `event` is the message's fixed
wording (its format string, which the code writes) and the values and tracebacks are left out;
KB_LOG_CONTENT=true puts the filled-in message, its values and the traceback in. Written by hand: the
standard library has no JSON formatter and one class does not justify a dependency.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import sys

from core.answering import log_context

FIELDS = ("phase", "duration")  # structured values code passes with extra=…; ids and timings only
OWN_LOGGERS = ("bot", "core", "adapters", "multihop_classifier")


class JsonFormatter(logging.Formatter):
    """One JSON object per record (see the module docstring)."""

    def __init__(self, *, content: bool = False) -> None:
        super().__init__()
        self.content = content

    def format(self, record: logging.LogRecord) -> str:
        stamp = dt.datetime.fromtimestamp(record.created, tz=dt.UTC).isoformat(timespec="milliseconds")
        line: dict[str, object] = {
            "ts": stamp,
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": record.getMessage() if self.content else str(record.msg),
        }
        line.update(log_context.current())
        for name in FIELDS:
            if hasattr(record, name):
                line[name] = getattr(record, name)
        if record.exc_info and record.exc_info[0] is not None:
            line["error_type"] = record.exc_info[0].__name__
            if self.content:
                line["traceback"] = self.formatException(record.exc_info)
        if self.content and record.args:
            line["message_args"] = [
                str(value) for value in (record.args if isinstance(record.args, tuple) else (record.args,))
            ]
        return json.dumps(line, ensure_ascii=False, default=str)


def configure_logging(*, verbose: bool, log_format: str = "text", content: bool = False) -> None:
    """Text: logging.basicConfig at warning (debug with -v), as before any setting is read. JSON: the plain
    stderr handler replaced by a JSON one, the project's own loggers at info (debug with -v) and everyone
    else's at warning. Handlers others installed (a test's log capture) are left alone."""
    level = logging.DEBUG if verbose else logging.WARNING
    if log_format != "json":
        logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
        return
    root = logging.getLogger()
    for handler in list(root.handlers):
        if type(handler) is logging.StreamHandler:  # basicConfig's; never a subclass someone else installed
            root.removeHandler(handler)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter(content=content))
    root.addHandler(handler)
    root.setLevel(level)
    for name in OWN_LOGGERS:
        logging.getLogger(name).setLevel(logging.DEBUG if verbose else logging.INFO)
