"""Markdown to Slack mrkdwn (pure)."""

from __future__ import annotations

import pytest

from adapters.slack.rendering.mrkdwn import to_mrkdwn


@pytest.mark.parametrize(
    ("markdown", "mrkdwn"),
    [
        ("**bold** and __also__", "*bold* and *also*"),
        ("*italic* and _italic_", "_italic_ and _italic_"),
        ("~~gone~~", "~gone~"),
        ("see [the guide](https://ex.com/g) [1]", "see the guide (<https://ex.com/g>) [1]"),
        ("a [link|pipe](https://ex.com/a|b)", "a link|pipe (<https://ex.com/a%7Cb>)"),
        ("![diagram](https://ex.com/d.png)", "diagram (<https://ex.com/d.png>)"),
        ("[点击这里领取](https://evil.example/login)", "点击这里领取 (<https://evil.example/login>)"),
        ("[https://ex.com/g](https://ex.com/g)", "<https://ex.com/g>"),
        ("<https://ex.com/auto>", "<https://ex.com/auto>"),
        ("## Steps", "*Steps*"),
        ("# **Bold** heading #", "*Bold heading*"),
        ("- one\n* two\n  + nested", "• one\n• two\n    • nested"),
        ("1. first\n2. second", "1. first\n2. second"),
        ("> quoted *text*", "> quoted _text_"),
        ("use `a < b && c` here", "use `a &lt; b &amp;&amp; c` here"),
        ("x < y & z > w", "x &lt; y &amp; z &gt; w"),
        ("---", "───"),
        ("2 * 3 * 4", "2 * 3 * 4"),
        ("snake_case_name", "snake_case_name"),
    ],
)
def test_inline_and_line_markdown_converts(markdown: str, mrkdwn: str) -> None:
    """Bold, italics, strike, links, images, headings, lists, quotes, code spans and escapes convert."""
    assert to_mrkdwn(markdown) == mrkdwn


def test_fenced_code_keeps_its_content_escaped_and_drops_the_language() -> None:
    """A fenced block stays a ``` block: its **stars** are untouched and only &, <, > are escaped."""
    assert to_mrkdwn("```python\nx = a**2 if a<b else 0\n```\nafter **b**") == (
        "```\nx = a**2 if a&lt;b else 0\n```\nafter *b*"
    )


def test_a_table_becomes_a_code_block_without_its_separator_row() -> None:
    """Slack has no tables, so a Markdown table is kept aligned in a code block."""
    table = "| name | size |\n|---|---:|\n| int | 4 |"
    assert to_mrkdwn(table) == "```\n| name | size |\n| int | 4 |\n```"


def test_only_the_sources_own_urls_keep_a_label() -> None:
    """A link to one of the answer's sources keeps its label; any other shows its URL next to the label."""
    text = "see [the guide](https://docs.example.com/guide) or [this](https://evil.example/x)"
    assert to_mrkdwn(text, trusted_urls={"https://docs.example.com/guide"}) == (
        "see <https://docs.example.com/guide|the guide> or this (<https://evil.example/x>)"
    )


@pytest.mark.parametrize(
    "markdown",
    [
        "<!channel> read this",
        "<!here|here> and <!everyone>",
        "ping <@U123ABC> and <@W999|boss>",
        "team <!subteam^S012|@oncall>",
        "a raw link <https://evil.example|looks safe>",
        "a raw link <https://evil.example|looks_safe>",
    ],
)
def test_mentions_and_raw_slack_markup_stay_escaped(markdown: str) -> None:
    """Slack markup written by a model (pings, user and group mentions, raw links) is shown, never acted on."""
    converted = to_mrkdwn(markdown)
    assert "<!" not in converted and "<@" not in converted
    assert "|looks safe>" not in converted and "|looks_safe>" not in converted
