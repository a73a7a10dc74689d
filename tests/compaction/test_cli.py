"""`kb compact` and `kb context`: argument parsing, report wording, and the commands over fake services."""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field

import pytest

from bot.cli.conversation.compact import (
    ContextView,
    compact_command,
    context_command,
    format_context,
    format_report,
    register,
)
from bot.settings import Settings
from core.conversation.compaction import CompactingContextLoader
from core.conversation.locks import LocalConversationLock
from core.errors import NotFound
from core.models import CompactionReport, ContextSnapshot
from tests.compaction.conftest import CONVERSATION, add_turns
from tests.fakes import FakeEngine, InMemoryConversationStore


@dataclass
class FakeServices:
    """The services shape bot.compose provides, built from fakes."""

    settings: Settings
    store: InMemoryConversationStore = field(default_factory=InMemoryConversationStore)
    engine: FakeEngine = field(default_factory=FakeEngine)
    lock: LocalConversationLock = field(default_factory=LocalConversationLock)

    @property
    def loader(self) -> CompactingContextLoader:
        """A loader configured from the settings, as bot.compose builds it."""
        return CompactingContextLoader(
            store=self.store,
            engine=self.engine,
            dialogue_number=self.settings.context.dialogue_number,
            recent_tokens=self.settings.context.recent_tokens,
        )


def test_both_commands_are_registered_with_a_conversation_argument() -> None:
    """`kb compact X` and `kb context X --json` parse to their handlers."""
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers(dest="command"))

    compact = parser.parse_args(["compact", "slack:T1:C1:17.1"])
    context = parser.parse_args(["context", "demo", "--json"])

    assert compact.conversation == "slack:T1:C1:17.1" and compact.handler.__name__ == "run_compact"
    assert context.json is True and context.handler.__name__ == "run_context"


async def test_a_short_form_names_the_conversation_it_uniquely_starts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`kb context` takes the full id, the thread ts alone, or a unique prefix of the id."""
    services = FakeServices(Settings())
    await add_turns(services.store, 2)

    for reference in (CONVERSATION, "1700000000.000100", "slack:T1:C1"):
        assert await context_command(services, reference, as_json=True) == 0
        assert json.loads(capsys.readouterr().out)["conversation_id"] == CONVERSATION


@pytest.mark.parametrize(
    ("report", "expected"),
    [
        (
            CompactionReport(True, 12, 2, 40, "token_budget_exceeded", 3),
            "compacted: revision 2, 12 turns in the summary (through record #40); 3 summary calls",
        ),
        (
            CompactionReport(False, 0, 0, 0, "under_budget"),
            "nothing to compact, under budget; revision 0, 0 turns in the summary",
        ),
        (
            CompactionReport(False, 4, 1, 9, "failed: model_unavailable", 1),
            "compaction failed (model_unavailable); nothing was changed: revision 1, 4 turns in the summary"
            " (through record #9)",
        ),
    ],
    ids=["compacted", "under-budget", "failed"],
)
def test_reports_read_as_one_line(report: CompactionReport, expected: str) -> None:
    """Each outcome of a manual compaction prints a line saying what happened and the resulting state."""
    assert format_report(report) == expected


def test_context_view_shows_summary_watermark_revision_and_counts() -> None:
    """The view lists revision, watermark, counts, the estimate against the budget and the summary."""
    view = ContextView(CONVERSATION, ContextSnapshot("第一行\n第二行", 7, 6, 2), 3, 960, 1000)

    text = format_context(view)

    assert "revision: 2" in text
    assert "watermark: record #7" in text
    assert "turns in the summary: 6" in text
    assert "turns after the watermark: 3 (~960 tokens)" in text
    assert "the next question compacts" in text
    assert text.endswith("summary:\n  第一行\n  第二行")


async def test_compact_command_compacts_once_then_reports_under_budget(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Over budget the command compacts and prints the report; run again it finds nothing to compact."""
    services = FakeServices(Settings(context={"recent_tokens": 2500}))
    await add_turns(services.store, 12)

    first = await compact_command(services, CONVERSATION)
    second = await compact_command(services, CONVERSATION)

    out = capsys.readouterr().out.splitlines()
    assert (first, second) == (0, 0)
    assert out[0].startswith("compacted: revision 1, ")
    assert out[1].startswith("nothing to compact, under budget; revision 1, ")
    assert len(services.engine.calls("summarise")) == 1


async def test_unknown_conversations_are_a_clear_error() -> None:
    """A conversation that does not exist is NotFound (exit 2 in the CLI) and makes no model call."""
    services = FakeServices(Settings())

    with pytest.raises(NotFound, match="No conversation 'nobody'"):
        await compact_command(services, "nobody")

    assert services.engine.history == []


async def test_context_command_prints_json_counts(capsys: pytest.CaptureFixture[str]) -> None:
    """`kb context --json` counts the turns after the watermark and flags whether the next question compacts."""
    services = FakeServices(Settings(context={"recent_tokens": 2500}))
    await add_turns(services.store, 12)

    code = await context_command(services, CONVERSATION, as_json=True)

    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert data["revision"] == 0 and data["unsummarised_turns"] == 12
    assert data["next_question_compacts"] is True
    assert data["token_budget"] == 2500
