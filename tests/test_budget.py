"""Token counting and clipping with the offline cl100k encoding."""

from __future__ import annotations

import logging

import pytest

from core.budget import clip, count_tokens, setting
from core.messages import CORE


def test_counting_uses_the_offline_encoding() -> None:
    """Chinese text counts roughly one token per character and English far fewer."""
    assert count_tokens("") == 0
    assert 8 <= count_tokens("行政复议申请期限为六十日") <= 16
    assert count_tokens("hello world") == 2


def test_text_within_budget_is_returned_unchanged() -> None:
    """A text that fits is never marked as truncated."""
    assert clip("短文本", 100) == "短文本"


def test_clip_finds_the_longest_prefix_with_a_chinese_marker() -> None:
    """A long Chinese text is cut to the longest prefix that fits, with the Chinese marker, within budget."""
    text = "行政复议机关应当自受理申请之日起六十日内作出行政复议决定。" * 40
    clipped = clip(text, 100)
    assert clipped.endswith(CORE.text("budget.truncated", "zh"))
    assert count_tokens(clipped) <= 100
    prefix = clipped.removesuffix("\n" + CORE.text("budget.truncated", "zh"))
    assert text.startswith(prefix)
    longer = text[: len(prefix) + 1] + "\n" + CORE.text("budget.truncated", "zh")
    assert count_tokens(longer) > 100


def test_english_text_gets_the_english_marker() -> None:
    """The marker follows the language of the text."""
    clipped = clip("The application must be filed within sixty days. " * 50, 40)
    assert clipped.endswith(CORE.text("budget.truncated", "en"))


@pytest.mark.parametrize("text", ["😀👍🏽" * 200, "👨‍👩‍👧" * 100, "e\u0301" * 300, "\ud83d" + "字" * 300])
def test_clip_never_splits_a_character_or_sequence(text: str) -> None:
    """Emoji, ZWJ sequences, combining marks and surrogates are never split at the cut."""
    clipped = clip(text, 30, lang="en")
    body = clipped.removesuffix("\n" + CORE.text("budget.truncated", "en"))
    assert text.startswith(body)
    if body:
        assert not ("\ud800" <= body[-1] <= "\udbff")
        assert body[-1] != "\u200d"
    assert body.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass") == body


def test_setting_clamps_and_falls_back(caplog: pytest.LogCaptureFixture) -> None:
    """Out-of-range values clamp, unparsable ones fall back to the default, both with a warning."""
    with caplog.at_level(logging.WARNING):
        assert setting("KB_X", "9", 3, 1, 6) == 6
        assert setting("KB_X", "0", 3, 1, 6) == 1
        assert setting("KB_X", "three", 3, 1, 6) == 3
        assert setting("KB_X", None, 3, 1, 6) == 3
    assert len(caplog.records) == 3
