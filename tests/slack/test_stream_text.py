"""Pure parts of native streaming: safe Markdown released in pieces, and the phases as timeline tasks."""

from __future__ import annotations

import random

import pytest

from adapters.slack.rendering.safe_markdown import ZERO_WIDTH_SPACE, StreamingMarkdown, safe_markdown
from adapters.slack.rendering.task_timeline import TaskTimeline
from core.events import Assessed, Compacting, ContextLoading, Generating, Queued, Retrieving

TEXT = (
    "See [the guide](https://x.example/g) [1], then ![diagram](https://i.example/d.png) and <!channel> "
    "or <@U1> <https://evil.example|safe>. Cite [2] and [3](not a link. Done [4]"
)


@pytest.mark.parametrize(
    ("markdown", "safe"),
    [
        ("[the guide](https://x.example/g)", "the guide (https://x.example/g)"),
        ("![alt](https://i.example/a.png)", "alt (https://i.example/a.png)"),
        ("[https://x.example](https://x.example)", "https://x.example"),
        ("<!here> hi", f"<{ZERO_WIDTH_SPACE}!here> hi"),
        ("a < b", f"a <{ZERO_WIDTH_SPACE} b"),
        ("**bold** [1] `code`", "**bold** [1] `code`"),
    ],
)
def test_links_show_their_destination_and_slack_markup_is_neutralised(markdown: str, safe: str) -> None:
    """Labelled links and images show their URL; every `<` is defused; the rest is left as Markdown."""
    assert safe_markdown(markdown) == safe


def test_text_released_in_any_pieces_equals_the_whole_made_safe() -> None:
    """However the text is cut into deltas, what is released adds up to safe_markdown of the whole."""
    generator = random.Random(7)
    for _ in range(300):
        stream, released, index = StreamingMarkdown(), "", 0
        while index < len(TEXT):
            size = generator.randint(1, 9)
            released += stream.feed(TEXT[index : index + size])
            index += size
        assert released + stream.finish() == safe_markdown(TEXT)
        assert stream.raw == TEXT


def test_a_link_still_arriving_is_held_back_and_a_citation_is_not() -> None:
    """An unclosed `[label](url` waits for its `)`; "[1] " is released at once."""
    stream = StreamingMarkdown()
    assert stream.feed("See [1] and [the gu") == "See [1] and "
    assert stream.feed("ide](https://x.exa") == ""
    assert stream.feed("mple/g) now") == "the guide (https://x.example/g) now"
    assert stream.held == ""


def test_every_phase_becomes_a_task_that_completes() -> None:
    """Queued, context, compaction, rounds (query, then the gap) and writing are tasks; end() completes them."""
    timeline = TaskTimeline("en")
    events = [
        Queued(position=2),
        ContextLoading(),
        Compacting(),
        Retrieving(round=1, query="deploy"),
        Retrieving(round=1, query="release"),
        Assessed(round=1, sufficient=False, missing="the rollback steps"),
        Retrieving(round=2, query="rollback"),
        Assessed(round=2, sufficient=True),
        Generating(),
    ]
    sent = []
    for event in events:
        assert timeline.apply(event)
        sent.extend(chunk.to_dict() for chunk in timeline.changes())
    timeline.end()
    sent.extend(chunk.to_dict() for chunk in timeline.changes())
    assert list(timeline.tasks) == ["queued", "context", "compacting", "round-1", "round-2", "writing"]
    last = {chunk["id"]: chunk for chunk in sent}
    assert all(chunk["status"] == "complete" for chunk in last.values())
    assert last["queued"]["title"] == "Waiting for 2 earlier question(s) in this thread"
    assert last["round-1"]["title"] == "Round 1: “deploy”" and last["round-1"]["details"] == "deploy\nrelease"
    assert last["round-1"]["output"] == "Still missing: the rollback steps"
    assert [c["status"] for c in sent if c["id"] == "context"] == ["in_progress", "complete"]
    assert timeline.changes() == []


def test_a_failure_marks_the_running_task_as_error_in_chinese_too() -> None:
    """end(failed=True) turns the task in progress into an error; titles follow the user's language."""
    timeline = TaskTimeline("zh")
    timeline.apply(ContextLoading())
    timeline.apply(Retrieving(round=1, query="复议 期限"))
    timeline.changes()
    timeline.end(failed=True)
    [chunk] = [c.to_dict() for c in timeline.changes()]
    assert (chunk["id"], chunk["status"], chunk["title"]) == ("round-1", "error", "第 1 轮检索:复议 期限")
    timeline.resend(["round-1", "unknown"])
    assert [c.id for c in timeline.changes()] == ["round-1"]
