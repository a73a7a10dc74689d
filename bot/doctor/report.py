"""The doctor's verdicts as values: one Check per thing looked at, its one line, the exit code, the JSON."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

Status = Literal["ok", "failed", "skipped"]
MARKS: dict[Status, str] = {"ok": "✓", "failed": "✗", "skipped": "–"}


@dataclass(frozen=True, slots=True)
class Check:
    """One thing the doctor looked at: its name, how it went, what it found and, when failed, what to do."""

    name: str
    status: Status
    detail: str
    fix: str = ""

    @classmethod
    def ok(cls, name: str, detail: str) -> Check:
        return cls(name, "ok", detail)

    @classmethod
    def failed(cls, name: str, detail: str, fix: str) -> Check:
        return cls(name, "failed", detail, fix)

    @classmethod
    def skipped(cls, name: str, detail: str) -> Check:
        return cls(name, "skipped", detail)

    def line(self) -> str:
        """`✓ name: detail`, or `✗ name: detail — fix`."""
        text = f"{MARKS[self.status]} {self.name}: {self.detail}"
        return f"{text} — {self.fix}" if self.fix else text

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "detail": self.detail, "fix": self.fix}


def exit_code(checks: Sequence[Check]) -> int:
    """0 only when nothing failed (a check skipped because its part is not configured does not fail)."""
    return 1 if any(check.status == "failed" for check in checks) else 0


def summary_line(checks: Sequence[Check]) -> str:
    """The closing line: how many passed, failed and were skipped."""
    counts = {status: sum(1 for c in checks if c.status == status) for status in MARKS}
    return f"{counts['ok']} ok, {counts['failed']} failed, {counts['skipped']} skipped"
