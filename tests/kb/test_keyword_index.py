"""The jieba keyword index: scoring, removal, persistence and repair from the vector store."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from adapters.knowledge.keywords.index import KeywordIndex
from adapters.knowledge.keywords.tokens import chunk_keywords, tokens_of
from core.knowledge.chunking import embedding_text
from core.models import Chunk
from core.text import fold, tokenize

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


def test_accented_words_are_one_token_found_with_or_without_their_accents() -> None:
    """ "malgré" is indexed whole (jieba's ASCII word pattern cut it into "malgr" + "é"), so the opera is found
    by its title typed with or without accents, and "é" alone matches nothing."""
    index = KeywordIndex()
    index.add([("roi", "Le roi malgré lui est un opéra-comique"), ("cafe", "Café Müller in São Paulo")])
    index.rebuild()
    assert tokenize("Le roi malgré lui", new_words=False) == ["le", "roi", "malgre", "lui"]
    assert [chunk_id for chunk_id, _ in index.search("malgré", 5)] == ["roi"]
    assert [chunk_id for chunk_id, _ in index.search("malgre", 5)] == ["roi"]
    assert [chunk_id for chunk_id, _ in index.search("Muller Sao Paulo", 5)] == ["cafe"]
    assert index.search("é", 5) == []
    assert tokenize("中文，が、Straße", new_words=False) == ["中文", "が", "strasse"]


def test_a_negated_word_is_not_found_by_its_tail() -> None:
    """未成年人 (minors) is not 成年人 (adults) nor 非营利 营利: a search for adults finds the article on adults,
    not every chunk about minors; the negated word itself is still found whole and by its head (未成年)."""
    index = KeywordIndex()
    index.add(
        [
            ("adults", "第十七条 十八周岁以上的自然人为成年人。"),
            ("minors", "第十九条 八周岁以上的未成年人为限制民事行为能力人。"),
            ("charity", "非营利法人不得分配利润。"),
        ]
    )
    index.rebuild()
    assert [chunk_id for chunk_id, _ in index.search("成年人", 5)] == ["adults"]
    assert [chunk_id for chunk_id, _ in index.search("未成年人", 5)] == ["minors"]
    assert [chunk_id for chunk_id, _ in index.search("营利", 5)] == []
    assert "成年人" not in tokenize("未成年人", new_words=False)
    assert tokenize("未来学家", new_words=False) == ["未来", "学家"]  # 未来 (future) negates nothing


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


def test_a_name_missing_from_the_dictionary_is_indexed_in_pieces_and_still_found() -> None:
    """Without jieba's HMM, an unknown name is split the same way in text and query, so it matches."""
    assert "范廷颂" not in tokens_of("范廷颂枢机是越南人").split(" ")
    index = KeywordIndex()
    index.add([("name", "范廷颂枢机是越南人"), ("other", "越南的首都是河内")])
    index.rebuild()
    assert [chunk_id for chunk_id, _ in index.search("范廷颂", 5)] == ["name"]


def test_an_index_saved_by_another_tokenizer_is_not_loaded(tmp_path: Path) -> None:
    """Tokens from an earlier tokenizer version are not reused: load() says no, the store rebuilds."""
    index = built(tmp_path / "kw")
    index.signature = "sig-1"
    index._unsaved = True
    index.save()
    meta = tmp_path / "kw" / "manifest.json"
    meta.write_text(meta.read_text(encoding="utf-8").replace("nohmm", "hmm"), encoding="utf-8")
    again = KeywordIndex(tmp_path / "kw")
    assert not again.load()
    assert len(again) == 0


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
    (broken / "manifest.json").write_text("{not json", encoding="utf-8")
    assert not KeywordIndex(broken).load()


@pytest.mark.parametrize(
    ("title", "heading", "text"),
    [
        ("中华人民共和国行政复议法", ("第三章 行政复议申请",), "第二十条 申请期限为六十日。"),
        ("ΟΔΟΣ Σ", ("Σ",), "Σ abc café"),
        ("《标题》", ("（一）",), "（二）后文"),
        ("", (), "e\u0301 开头是组合符"),
        ("a-b_c", ("x.y",), "z%w&v"),
        ("ＡＢＣ", ("①②",), "ﬁ ǅ İ"),
    ],
)
def test_chunk_keywords_equal_the_tokens_of_each_embedding_text(
    title: str, heading: tuple[str, ...], text: str
) -> None:
    """Tokenising a document's shared title/heading line once gives the same terms as whole embedding texts."""
    chunks = [Chunk(text, heading, 0, 1), Chunk(text + "之二", heading, 1, 1), Chunk("另起", (), 2, 1)]
    expected = [tokens_of(embedding_text(chunk, document_title=title)) for chunk in chunks]
    assert chunk_keywords(title, chunks) == expected


@pytest.mark.parametrize(
    "text",
    [
        "用人单位与劳动者约定试用期的，试用期最长不得超过六个月；《中华人民共和国劳动合同法》第十九条。",
        "The U.S. e-mail policy (v2.0-beta) covers COVID-19 leave: 100,000.5 USD, see https://example.com/a.b",
        "iPhone15 Pro 张三丰在2024年3月1日说：“你好！” C++ 和 C# 与 .NET 3.14\t\n  空白 \u3000 ｆｕｌｌ",
    ],
)
def test_search_tokens_without_the_hmm_are_jiebas_own(text: str) -> None:
    """rjieba, which cuts the keyword tokens, gives jieba's search-mode words without the HMM, word for word."""
    import jieba

    folded = fold(text)
    words = (word.strip() for word in jieba.lcut_for_search(folded, HMM=False))
    assert tokenize(text, new_words=False) == [word for word in words if re.search(r"[^\W_]", word)]
