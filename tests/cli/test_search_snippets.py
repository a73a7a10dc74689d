"""`kb search` as a subprocess: the snippet is the sentence that matched, not the chunk's opening; keyword
search works in a one-document dataset; blend scores keep absolute relevance."""

from __future__ import annotations

import json
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


def test_keyword_search_finds_the_word_in_a_one_document_dataset(tmp_path: Path) -> None:
    """`kb search --mode keywords` in a dataset of one document finds a word it holds, and nothing for a
    word it does not hold."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "travel.md").write_text(POLICY, encoding="utf-8")
    env = clean_env(tmp_path / "home")
    assert kb(env, "ingest", str(folder), "--dataset", "t").returncode == 0
    found = kb(env, "search", "hotel", "--dataset", "t", "--mode", "keywords")
    assert found.returncode == 0 and "travel" in found.stdout and "no hits" not in found.stdout
    missing = kb(env, "search", "parking", "--dataset", "t", "--mode", "keywords")
    assert missing.returncode == 0 and missing.stdout.startswith("no hits")


PARKING = "# Parking\n\nEmployees may park in the north garage. Visitors get a day pass at reception.\n"


def test_blend_scores_keep_absolute_relevance(tmp_path: Path) -> None:
    """`kb search --mode blend`: a query matching nothing scores near 0 even at threshold 0 and shows no hits
    at the default threshold; the document holding the word scores well above the one that does not."""
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "travel.md").write_text(POLICY, encoding="utf-8")
    (folder / "parking.md").write_text(PARKING, encoding="utf-8")
    env = clean_env(tmp_path / "home")
    assert kb(env, "ingest", str(folder), "--dataset", "t").returncode == 0

    def scores(query: str, *extra: str) -> dict[str, float]:
        result = kb(env, "search", query, "--dataset", "t", "--mode", "blend", "--json", *extra)
        assert result.returncode == 0, result.stderr
        return {hit["document"]: hit["score"] for hit in json.loads(result.stdout)["hits"]}

    nothing = scores("quantum chromodynamics", "--threshold", "0")
    assert nothing and max(nothing.values()) < 0.1
    assert scores("quantum chromodynamics") == {}
    hotel = scores("hotel", "--threshold", "0")
    assert hotel["travel"] >= 0.28 and hotel.get("parking", 0.0) < 0.1
