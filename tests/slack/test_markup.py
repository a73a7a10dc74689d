"""Slack markup to plain text, and permalink parsing (pure functions)."""

from __future__ import annotations

import pytest

from adapters.slack.inbound.plain_text import mentioned_user_ids, to_plain_text
from adapters.slack.surfaces.permalinks import parse_permalink


@pytest.mark.parametrize(
    ("markup", "plain"),
    [
        ("<@UBOT> what is the SLA?", "what is the SLA?"),
        ("<@UBOT> ask <@U2> and <@U3|carol>", "ask @alice and @carol"),
        ("<@UBOT> ping <@U4>", "ping"),
        ("see <#C123|general> and <#C456>", "see #general and #C456"),
        ("read <https://ex.com/a?b=1&amp;c=2|the doc> now", "read the doc (https://ex.com/a?b=1&c=2) now"),
        ("<https://ex.com> and <mailto:a@b.c|a@b.c>", "https://ex.com and a@b.c"),
        ("<!here> a &lt;b&gt; &amp;amp; c", "@here a <b> &amp; c"),
        ("<!subteam^S1|@ops> and <!date^1392734382^{date}|Feb 18>", "@ops and Feb 18"),
        ("  spaced    out \n\n\n\n lines  ", "spaced out\n\nlines"),
    ],
)
def test_markup_becomes_plain_text(markup: str, plain: str) -> None:
    """Each kind of Slack markup is resolved the way a reader would see it, the bot mention removed."""
    assert to_plain_text(markup, bot_user_id="UBOT", user_names={"U2": "alice"}) == plain


def test_mentioned_user_ids_are_listed_once_in_order() -> None:
    """Repeated mentions are reported once, in order of appearance."""
    assert mentioned_user_ids("<@U2> <@UBOT> <@U2|x> <@W3>") == ["U2", "UBOT", "W3"]


def test_a_root_permalink_is_its_own_thread() -> None:
    """A root message's permalink gives its channel and a ts that is also the thread root."""
    link = parse_permalink("https://team.slack.com/archives/C1H9RESGA/p1358546515000008")
    assert link is not None
    assert (link.channel_id, link.message_ts, link.thread_ts) == (
        "C1H9RESGA",
        "1358546515.000008",
        "1358546515.000008",
    )


def test_a_reply_permalink_names_its_thread_root_even_inside_slack_markup() -> None:
    """A reply's ?thread_ts= is the thread root; links wrapped as <url> with &amp; entities parse too."""
    text = "compact <https://team.slack.com/archives/C1/p1358546517000023?thread_ts=1358546515.000008&amp;cid=C1>"
    link = parse_permalink(text)
    assert link is not None
    assert (link.channel_id, link.message_ts, link.thread_ts) == (
        "C1",
        "1358546517.000023",
        "1358546515.000008",
    )


@pytest.mark.parametrize(
    "text", ["", "trace", "https://example.com/archives/x", "https://team.slack.com/archives/C1/"]
)
def test_text_without_a_message_link_is_not_a_permalink(text: str) -> None:
    """Anything that is not a Slack message permalink yields None."""
    assert parse_permalink(text) is None
