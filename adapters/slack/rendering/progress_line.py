"""What the placeholder shows while an answer is being prepared: one localized status line per phase (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field

from adapters.slack.rendering.blocks import SECTION_TEXT_MAX, SlackMessage, clip, context, section
from adapters.slack.rendering.mrkdwn import escape, to_mrkdwn
from adapters.slack.rendering.texts import t
from core.answering.progress_text import progress_text
from core.events import AnswerDelta, Notice, Progress, Queued

STATUS_MAX = 300
PARTIAL_MAX = SECTION_TEXT_MAX - 100


def status_text(event: Progress, lang: str) -> str | None:
    """The localized status line for a phase event (shared with the CLI); None for non-phase events."""
    text = progress_text(event, lang)
    return clip(text, STATUS_MAX) if text is not None else None


@dataclass(slots=True)
class ProgressView:
    """The placeholder's intermediate state: a status line plus the answer text streamed so far."""

    lang: str
    status: str = ""
    partial: str = ""
    notices: list[str] = field(default_factory=list)

    def apply(self, event: Progress) -> bool:
        """Fold one event in; True when what the placeholder should show changed."""
        text = status_text(event, self.lang)
        if text is not None:
            changed = text != self.status
            self.status = text
            return changed
        if isinstance(event, AnswerDelta) and event.text:
            self.partial += event.text
            self.status = t("writing", self.lang)
            return True
        if isinstance(event, Notice) and event.text:
            self.notices.append(event.text)
            return False  # shown with the final answer
        return False

    def message(self) -> SlackMessage:
        """The intermediate message: always marked as in progress, so it never looks final."""
        line = "⏳ " + escape(clip(self.status or t("received", self.lang), STATUS_MAX))
        blocks = [context(line)]
        if self.partial.strip():
            partial = to_mrkdwn(self.partial[: PARTIAL_MAX * 2])
            if len(partial) > PARTIAL_MAX:
                partial = partial[:PARTIAL_MAX].rsplit(" ", 1)[0] + " …"
            if partial.count("```") % 2:
                partial += "\n```"
            blocks.append(section(partial))
        text = escape(clip(self.status or t("received", self.lang), STATUS_MAX))
        return SlackMessage(text=text, blocks=blocks)


def placeholder_message(lang: str, *, queued_behind: int = 0) -> SlackMessage:
    """The first reply, posted before any pipeline work: "working on it" or "queued"."""
    view = ProgressView(lang=lang)
    if queued_behind:
        view.apply(Queued(position=queued_behind))
    return view.message()
