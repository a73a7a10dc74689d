"""Keyword segments: BM25 over several of them scores as bm25s over one corpus; changes cost the change."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from pathlib import Path

import bm25s
import numpy as np
import pytest

from adapters.knowledge.keywords.index import SEGMENTS, KeywordIndex
from adapters.knowledge.keywords.merging import MERGE_FACTOR, SMALLEST, SegmentSize, merges_due
from adapters.knowledge.keywords.scoring import BM25_B, BM25_K1, Part, Searchable, top_scores
from adapters.knowledge.keywords.segment import build_segment, merge_segments

WORDS = [f"词{i}" for i in range(300)] + ["港口", "码头", "a", "b"]


def corpus(seed: int, size: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    texts = [" ".join(rng.choices(WORDS, k=rng.randint(1, 60))) for _ in range(size)]
    return [(f"c{i:04d}", text) for i, text in enumerate([*texts, "港口 港口 港口", "solo"])]


def bm25s_top(pairs: list[tuple[str, str]]) -> Callable[[list[str], int], list[tuple[str, float]]]:
    """bm25s over the pairs as one corpus: query, k -> the k best (chunk id, score), ties by id."""
    reference = bm25s.BM25(k1=BM25_K1, b=BM25_B)
    reference.index([text.split(" ") for _, text in pairs], show_progress=False)

    def top(query: list[str], k: int) -> list[tuple[str, float]]:
        scores = reference.get_scores(query)
        found = [(pairs[i][0], float(scores[i])) for i in np.flatnonzero(scores > 0)]
        return sorted(found, key=lambda pair: (-pair[1], pair[0]))[:k]

    return top


@pytest.mark.parametrize("cuts", [(), (64,), (100, 101, 400)])
def test_scores_over_segments_are_bm25s_scores_over_the_whole_corpus(cuts: tuple[int, ...]) -> None:
    """However the corpus is split into segments, every query gets bm25s's own scores and order."""
    pairs = corpus(5, 700)
    bounds = [0, *cuts, len(pairs)]
    parts = [
        Part(build_segment(f"s{i}", pairs[a:b]), None) for i, (a, b) in enumerate(itertools.pairwise(bounds))
    ]
    index = Searchable.of(parts)
    reference = bm25s_top(pairs)
    rng = random.Random(7)
    for _ in range(150):
        query = rng.sample(WORDS, rng.randint(1, 5)) + ["solo"] * rng.randint(0, 1)
        assert top_scores(index, query, 20) == reference(query, 20)


def test_scores_kept_for_frequent_words_stay_within_their_budget_and_change_nothing() -> None:
    """With a budget of a few words' scores, repeated queries still get bm25s's scores and the kept
    scores never exceed the budget (the least recently used are dropped)."""
    pairs = corpus(8, 500)
    index = Searchable.of([Part(build_segment("s", pairs), None)], cache_bytes=4000)
    reference = bm25s_top(pairs)
    rng = random.Random(1)
    for _ in range(200):
        query = rng.sample(WORDS[:40], rng.randint(1, 4))
        assert top_scores(index, query, 10) == reference(query, 10)
        assert 0 < index.cached_bytes <= 4000


def test_removed_rows_count_for_nothing_in_the_statistics_or_the_results() -> None:
    """Scores with rows marked removed equal bm25s's over the corpus without those chunks."""
    pairs = corpus(11, 400)
    first, second = build_segment("a", pairs[:200]), build_segment("b", pairs[200:])
    alive = np.ones(len(second), dtype=bool)
    alive[::3] = False
    kept = pairs[:200] + [pair for pair, keep in zip(pairs[200:], alive, strict=True) if keep]
    index = Searchable.of([Part(first, None), Part(second, alive)])
    reference = bm25s_top(kept)
    rng = random.Random(3)
    for _ in range(100):
        query = rng.sample(WORDS, rng.randint(1, 4))
        assert top_scores(index, query, 15) == reference(query, 15)


def test_a_merged_segment_scores_as_its_parts_did() -> None:
    """Merging two segments (dropping removed rows) changes no score of any query."""
    pairs = corpus(2, 300)
    first, second = build_segment("a", pairs[:150]), build_segment("b", pairs[150:])
    alive = np.ones(len(first), dtype=bool)
    alive[5:40] = False
    separate = Searchable.of([Part(first, alive), Part(second, None)])
    merged = Searchable.of(
        [Part(merge_segments("m", [(first, alive), (second, np.ones(len(second), bool))]), None)]
    )
    assert len(merged.parts[0].segment) == len(pairs) - 35
    rng = random.Random(9)
    for _ in range(100):
        query = rng.sample(WORDS, rng.randint(1, 4))
        assert top_scores(merged, query, 25) == top_scores(separate, query, 25)


def test_the_merge_policy_joins_a_full_tier_and_purges_a_mostly_removed_segment() -> None:
    """MERGE_FACTOR small segments become one; a large one is left alone; one with a third removed is rewritten."""
    small = [SegmentSize(f"s{i}", 900) for i in range(MERGE_FACTOR - 1)]
    big = SegmentSize("big", SMALLEST * 300)
    assert merges_due([big, *small]) == []
    assert merges_due([big, *small, SegmentSize("new", 10)]) == [["s0", "s1", "s2", "new"]]
    assert merges_due([SegmentSize("x", 1000, removed=400), big]) == [["x"]]


def test_adding_to_a_saved_index_writes_one_new_segment_and_leaves_the_others_untouched(
    tmp_path: Path,
) -> None:
    """A save after adding a few chunks to a large index writes only them; the big segment's files stay as they were."""
    index = KeywordIndex(tmp_path / "kw")
    index.add_tokenised(corpus(1, 5000))
    index.signature = "sig-1"
    index.save()
    folders = {path.name: path.stat().st_mtime_ns for path in (tmp_path / "kw" / SEGMENTS).iterdir()}
    assert len(folders) == 1
    index.apply(["c0001"], [("new-1", "港口 航道"), ("new-2", "码头 航道")], "sig-2")
    index.save()
    after = {path.name: path.stat().st_mtime_ns for path in (tmp_path / "kw" / SEGMENTS).iterdir()}
    assert len(after) == 2 and all(after[name] == stamp for name, stamp in folders.items())
    assert index.segment_count() == 2
    again = KeywordIndex(tmp_path / "kw")
    assert again.load() and again.signature == "sig-2"
    assert {"new-1", "new-2"} <= again.ids() and "c0001" not in again.ids()
    assert [chunk_id for chunk_id, _ in again.search("航道", 5)] == ["new-1", "new-2"]


def test_two_processes_share_one_folder_and_see_each_others_saves(tmp_path: Path) -> None:
    """What one index object saves, another over the same folder takes at refresh(), without re-reading texts."""
    writer, reader = KeywordIndex(tmp_path / "kw"), KeywordIndex(tmp_path / "kw")
    writer.add([("a", "行政复议申请期限为六十日")])
    writer.signature = "sig-1"
    writer.save()
    assert reader.load() and reader.search("行政复议", 3)[0][0] == "a"
    assert not reader.refresh()  # nothing new: one stat
    writer.apply(["a"], writer.tokenise([("b", "行政诉讼起诉期限为十五日")]), "sig-2")
    writer.save()
    assert reader.refresh() and reader.signature == "sig-2"
    assert [chunk_id for chunk_id, _ in reader.search("期限", 3)] == ["b"]


def test_a_save_keeps_what_another_process_saved_meanwhile_and_hides_its_own_removals_there(
    tmp_path: Path,
) -> None:
    """Two holders saving in turn: neither loses the other's segment; an id one removed is gone from both."""
    first, second = KeywordIndex(tmp_path / "kw"), KeywordIndex(tmp_path / "kw")
    first.add([("a", "港口 码头"), ("shared", "天气 港口")])
    first.save()
    second.load()
    first.add([("b", "港口 仓库")])
    first.save()  # second has not seen b
    second.remove(["a"])
    second.add([("c", "港口 航道")])
    second.save()
    third = KeywordIndex(tmp_path / "kw")
    assert third.load()
    assert third.ids() == {"b", "c", "shared"}


def test_many_small_saves_stay_a_few_segments(tmp_path: Path) -> None:
    """Forty saves of 50 chunks each leave fewer than 2 * MERGE_FACTOR segments, every chunk still found once."""
    index = KeywordIndex(tmp_path / "kw")
    pairs = corpus(4, 2000)
    for start in range(0, 2000, 50):
        index.add_tokenised(pairs[start : start + 50])
        index.save()
    assert index.segment_count() < 2 * MERGE_FACTOR
    again = KeywordIndex(tmp_path / "kw")
    assert again.load() and len(again) == len({chunk_id for chunk_id, _ in pairs[:2000]})
    assert again.search("港口", 3) == index.search("港口", 3)


def test_a_segment_whose_chunks_are_all_removed_is_dropped_at_the_next_save(tmp_path: Path) -> None:
    """Removing every chunk of a saved segment leaves no segment behind (and nothing found)."""
    index = KeywordIndex(tmp_path / "kw")
    index.add([("a", "港口 码头"), ("b", "港口 仓库")])
    index.save()
    index.remove(["a", "b"])
    index.save()
    assert index.segment_count() == 0 and index.search("港口", 5) == []
    again = KeywordIndex(tmp_path / "kw")
    assert again.load() and len(again) == 0
