"""The jieba + bm25s keyword index: scoring, removal, persistence and repair from the vector store."""

from __future__ import annotations

from pathlib import Path

from adapters.keyword_index import KeywordIndex

TEXTS = {
    "a": "行政复议申请期限为六十日",
    "b": "行政诉讼的起诉期限为十五日",
    "c": "劳动合同的试用期不得超过六个月",
    "d": "Java 虚拟机的垃圾回收",
}


def built(directory: Path | None = None) -> KeywordIndex:
    index = KeywordIndex(directory)
    index.add(TEXTS.items())
    index.rebuild()
    return index


def test_chinese_queries_match_by_jieba_words_with_positive_scores_only() -> None:
    """A Chinese query ranks the chunks sharing its words first and never returns zero-score chunks."""
    results = built().search("行政复议的申请期限", 10)
    assert results[0][0] == "a"
    assert "d" not in {chunk_id for chunk_id, _ in results}
    assert all(score > 0 for _, score in results)
    assert [s for _, s in results] == sorted((s for _, s in results), reverse=True)


def test_unknown_words_and_empty_queries_return_nothing() -> None:
    """Queries made only of unknown words or punctuation give no hits (bm25s would give arbitrary zeros)."""
    index = built()
    assert index.search("量子纠缠", 5) == []
    assert index.search("?!", 5) == []
    assert KeywordIndex().search("期限", 5) == []


def test_k_limits_results_and_equal_scores_are_ordered_by_id() -> None:
    """At most k results; chunks with equal scores come in id order."""
    index = KeywordIndex()
    index.add([("z", "港口 码头"), ("m", "港口 码头"), ("a", "港口 码头"), ("q", "天气")])
    index.rebuild()
    assert [chunk_id for chunk_id, _ in index.search("码头", 10)] == ["a", "m", "z"]
    assert len(index.search("码头", 2)) == 2


def test_removed_chunks_disappear_after_rebuild() -> None:
    """remove() marks the index dirty; after rebuild() the removed chunk is never returned."""
    index = built()
    index.remove(["a"])
    assert index.dirty
    index.rebuild()
    assert "a" not in {chunk_id for chunk_id, _ in index.search("行政复议申请期限", 10)}
    assert len(index) == 3


def test_saved_index_loads_with_identical_results(tmp_path: Path) -> None:
    """save() then load() in a fresh object gives the same results and the same signature."""
    index = built(tmp_path / "kw")
    index.signature = "sig-1"
    index._unsaved = True  # a freshly built index with a signature is what the store saves
    index.save()
    again = KeywordIndex(tmp_path / "kw")
    assert again.load()
    assert again.signature == "sig-1"
    assert not again.dirty
    assert again.search("试用期", 5) == index.search("试用期", 5)


def test_sync_fetches_missing_texts_and_drops_extra_ids() -> None:
    """sync() indexes ids it lacks via the fetch callback and forgets ids no longer live."""
    index = KeywordIndex()
    index.add([("old", "旧的 文本")])
    fetched: list[list[str]] = []

    def fetch(ids: list[str]) -> dict[str, str]:
        fetched.append(list(ids))
        return {chunk_id: TEXTS[chunk_id] for chunk_id in ids}

    assert index.sync(["a", "b"], fetch, "sig-2")
    index.rebuild()
    assert fetched == [["a", "b"]]
    assert index.ids() == {"a", "b"}
    assert index.signature == "sig-2"
    assert not index.sync(["a", "b"], fetch, "sig-2")


def test_missing_or_corrupt_folder_loads_as_empty(tmp_path: Path) -> None:
    """A missing or damaged saved index is reported as not loaded (the store rebuilds it)."""
    assert not KeywordIndex(tmp_path / "none").load()
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "meta.json").write_text("{not json", encoding="utf-8")
    assert not KeywordIndex(broken).load()
