"""The phases of an answer as Slack task updates in a timeline (chat streaming's task_update chunks) (pure).

One task per phase: waiting behind earlier questions, reading the context, compacting it, each retrieval
round (its queries, then what the assessment found missing), writing. A task is in progress until the
next phase starts; the final event completes every open task (or marks it failed). Only tasks whose state
changed since the last flush are sent, each in its latest state, in the order they first changed.
"""

from __future__ import annotations

from dataclasses import dataclass

from slack_sdk.models.messages.chunk import TaskUpdateChunk

from adapters.slack.rendering.blocks import clip
from adapters.slack.rendering.texts import t
from core.events import Assessed, Compacting, ContextLoading, Generating, Progress, Queued, Retrieving

TITLE_MAX = 150  # a task title is one line of the timeline
DETAILS_MAX = 500
TaskStatus = str  # "pending" | "in_progress" | "complete" | "error"


@dataclass(slots=True)
class Task:
    """One step in the timeline, as Slack shows it."""

    id: str
    title: str
    status: TaskStatus = "in_progress"
    details: str | None = None
    output: str | None = None

    def chunk(self) -> TaskUpdateChunk:
        return TaskUpdateChunk(
            id=self.id,
            title=clip(self.title, TITLE_MAX),
            status=self.status,
            details=clip(self.details, DETAILS_MAX) if self.details else None,
            output=clip(self.output, DETAILS_MAX) if self.output else None,
        )


class TaskTimeline:
    """Folds progress events into tasks; changes() hands out what to send next."""

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.tasks: dict[str, Task] = {}
        self._changed: list[str] = []
        self._queries: dict[int, list[str]] = {}

    def _touch(self, task: Task) -> None:
        self.tasks[task.id] = task
        if task.id not in self._changed:
            self._changed.append(task.id)

    def _close_open(self, status: TaskStatus = "complete", *, keep: str = "") -> None:
        for task in self.tasks.values():
            if task.status == "in_progress" and task.id != keep:
                task.status = status
                self._touch(task)

    def _start(self, task_id: str, title: str, details: str | None = None) -> Task:
        self._close_open(keep=task_id)
        task = self.tasks.get(task_id) or Task(task_id, title)
        task.title, task.status = title, "in_progress"
        if details:
            task.details = details
        self._touch(task)
        return task

    def apply(self, event: Progress) -> bool:
        """Fold one event in; True when a task changed (answer text, notices and final events: False)."""
        lang = self.lang
        if isinstance(event, Queued):
            self._start("queued", t("task_queued", lang, n=event.position))
        elif isinstance(event, ContextLoading):
            self._start("context", t("task_context", lang))
        elif isinstance(event, Compacting):
            self._start("compacting", t("task_compacting", lang))
        elif isinstance(event, Retrieving):
            task_id = f"round-{event.round}"
            queries = self._queries.setdefault(event.round, [])
            if event.query and event.query not in queries:
                queries.append(event.query)
            queries = queries or ["—"]
            self._start(
                task_id,
                t("task_round", lang, round=event.round, query=queries[0]),
                details="\n".join(queries) if len(queries) > 1 else None,
            )
        elif isinstance(event, Assessed):
            task = self.tasks.get(f"round-{event.round}") or self._start(
                f"round-{event.round}", t("task_round", lang, round=event.round, query="—")
            )
            task.status = "complete"
            task.output = (
                t("task_sufficient", lang)
                if event.sufficient
                else t("task_missing", lang, missing=event.missing or "—")
            )
            self._touch(task)
        elif isinstance(event, Generating):
            self._start("writing", t("task_writing", lang))
        else:
            return False
        return True

    def end(self, *, failed: bool = False) -> None:
        """The answer is final: every open task is complete (or failed)."""
        self._close_open("error" if failed else "complete")

    def changes(self) -> list[TaskUpdateChunk]:
        """The tasks changed since the last call, in their latest state."""
        changed, self._changed = self._changed, []
        return [self.tasks[task_id].chunk() for task_id in changed]

    @property
    def has_changes(self) -> bool:
        """True when some task changed since the last changes()."""
        return bool(self._changed)

    def resend(self, task_ids: list[str]) -> None:
        """These tasks' updates were not delivered: send them (in their latest state) with the next changes."""
        for task_id in task_ids:
            if task_id in self.tasks and task_id not in self._changed:
                self._changed.append(task_id)

    def all(self) -> list[TaskUpdateChunk]:
        """Every task in its current state (for a stream that starts late)."""
        self._changed = []
        return [task.chunk() for task in self.tasks.values()]
