"""`kb search` as a subprocess: the snippet is the sentence that matched, not the chunk's opening; keyword
search works in a one-document dataset; blend scores keep absolute relevance."""

from __future__ import annotations

import json

import pytest

from bot.cli.knowledge.snippet import best_sentence
from tests.cli.cli_support import clean_env, kb, prepare_home, run_main

POLICY = (
    "# Travel\n\nAll travel is booked through the portal. Economy class is the rule for flights under six "
    "hours. Hotel costs are refunded up to 150 EUR per night with a receipt.\n"
)
PARKING = "# Parking\n\nEmployees may park in the north garage. Visitors get a day pass at reception.\n"


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A KB_HOME with the travel policy alone as "one" and beside the parking rules as "two"."""
    root = tmp_path_factory.mktemp("snippets")
    one, two = root / "one", root / "two"
    one.mkdir()
    two.mkdir()
    (one / "travel.md").write_text(POLICY, encoding="utf-8")
    (two / "travel.md").write_text(POLICY, encoding="utf-8")
    (two / "parking.md").write_text(PARKING, encoding="utf-8")
    home = prepare_home(
        root / "home", ("ingest", str(one), "--dataset", "one"), ("ingest", str(two), "--dataset", "two")
    )
    return clean_env(home)


def test_the_snippet_is_the_matching_sentence(env: dict[str, str]) -> None:
    """A query about hotels shows the hotel sentence (after "…"), not "All travel is booked…"."""
    result = kb(env, "search", "hotel refund per night", "--dataset", "one", "--threshold", "0")
    assert result.returncode == 0, result.stderr
    row = result.stdout.splitlines()[1]
    assert "…Hotel costs are refunded up to 150 EUR" in row and "All travel is booked" not in row


def test_a_paraphrase_or_a_first_sentence_match_keeps_the_chunk_opening() -> None:
    """No shared word (found by meaning) or a match in the first sentence: the chunk as it starts."""
    text = "试用期最长不得超过六个月。工资不得低于百分之八十。"
    assert best_sentence(text, "probation") == text
    assert best_sentence(text, "试用期") == text
    assert best_sentence(text, "工资") == "…工资不得低于百分之八十。"


def test_keyword_search_finds_the_word_in_a_one_document_dataset(env: dict[str, str]) -> None:
    """`kb search --mode keywords` in a dataset of one document finds a word it holds, and nothing for a
    word it does not hold."""
    found = kb(env, "search", "hotel", "--dataset", "one", "--mode", "keywords")
    assert found.returncode == 0 and "travel" in found.stdout and "no hits" not in found.stdout
    missing = kb(env, "search", "parking", "--dataset", "one", "--mode", "keywords")
    assert missing.returncode == 0 and missing.stdout.startswith("no hits")


def test_blend_scores_keep_absolute_relevance(
    env: dict[str, str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`kb search --mode blend` (in this process): a query matching nothing scores near 0 even at threshold 0
    and shows no hits at the default threshold; the document holding the word scores well above the one
    that does not."""
    monkeypatch.setenv("KB_HOME", env["KB_HOME"])

    def scores(query: str, *extra: str) -> dict[str, float]:
        code, out, err = run_main(
            capsys, "search", query, "--dataset", "two", "--mode", "blend", "--json", *extra
        )
        assert code == 0, err
        return {hit["document"]: hit["score"] for hit in json.loads(out)["hits"]}

    nothing = scores("quantum chromodynamics", "--threshold", "0")
    assert nothing and max(nothing.values()) < 0.1
    assert scores("quantum chromodynamics") == {}
    hotel = scores("hotel", "--threshold", "0")
    assert hotel["travel"] >= 0.28 and hotel.get("parking", 0.0) < 0.1
