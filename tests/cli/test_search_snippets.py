"""`kb search` as a subprocess: the snippet is the sentence that matched, not the chunk's opening."""

from __future__ import annotations

from pathlib import Path

from bot.cli.knowledge.snippet import best_sentence
from tests.cli.cli_support import clean_env, kb

POLICY = (
    "# Travel\n\nAll travel is booked through the portal. Economy class is the rule for flights under six "
    "hours. Hotel costs are refunded up to 150 EUR per night with a receipt.\n"
)


def test_the_snippet_is_the_matching_sentence(tmp_path: Path) -> None:
    """A query about hotels shows the hotel sentence (after "…"), not "All travel is booked…"."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "travel.md").write_text(POLICY, encoding="utf-8")
    env = clean_env(tmp_path / "home")
    assert kb(env, "ingest", str(folder), "--dataset", "t").returncode == 0
    result = kb(env, "search", "hotel refund per night", "--dataset", "t", "--threshold", "0")
    assert result.returncode == 0, result.stderr
    row = result.stdout.splitlines()[1]
    assert "…Hotel costs are refunded up to 150 EUR" in row and "All travel is booked" not in row


def test_a_paraphrase_or_a_first_sentence_match_keeps_the_chunk_opening() -> None:
    """No shared word (found by meaning) or a match in the first sentence: the chunk as it starts."""
    text = "试用期最长不得超过六个月。工资不得低于百分之八十。"
    assert best_sentence(text, "probation") == text
    assert best_sentence(text, "试用期") == text
    assert best_sentence(text, "工资") == "…工资不得低于百分之八十。"
