"""Markdown to Slack mrkdwn (pure)."""

from __future__ import annotations

import pytest

from adapters.slack.mrkdwn import to_mrkdwn


@pytest.mark.parametrize(
    ("markdown", "mrkdwn"),
    [
        ("**bold** and __also__", "*bold* and *also*"),
        ("*italic* and _italic_", "_italic_ and _italic_"),
        ("~~gone~~", "~gone~"),
        ("see [the guide](https://ex.com/g) [1]", "see <https://ex.com/g|the guide> [1]"),
        ("a [link|pipe](https://ex.com/a|b)", "a <https://ex.com/a%7Cb|link¦pipe>"),
        ("![diagram](https://ex.com/d.png)", "<https://ex.com/d.png|diagram>"),
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
