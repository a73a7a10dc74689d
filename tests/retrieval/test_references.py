"""Reading the references a paragraph makes: cited articles of its own or another document, titles, links."""

from __future__ import annotations

from core.retrieval.references import SELF, Reference, article_number, cites_article, references_in


def test_a_cited_article_of_another_document_and_of_its_own() -> None:
    """《X》第N条 names X's article N; 本法第N条 (and the articles listed after it) its own document's."""
    text = "依照《中华人民共和国行政诉讼法》第四十五条的规定起诉；或者依照本法第二十四条、第二十五条申请。"
    assert references_in(text) == [
        Reference("中华人民共和国行政诉讼法", 45),
        Reference(SELF, 24),
        Reference(SELF, 25),
    ]


def test_a_law_cited_by_its_bare_name_with_an_article() -> None:
    """依照刑法第N条 names 刑法's article N, as 《刑法》第N条 would; 本法第N条 stays the paragraph's own."""
    text = "构成犯罪的，依照刑法第一百三十三条、第一百三十四条的规定追究刑事责任；违反本法第十条的，依照治安管理处罚法第二十五条处罚。"
    assert references_in(text) == [
        Reference("刑法", 133),
        Reference("刑法", 134),
        Reference("治安管理处罚法", 25),
        Reference(SELF, 10),
    ]


def test_a_document_named_without_an_article_and_a_markdown_link() -> None:
    """A title alone names the document; a link names its target; a link inside the page names nothing."""
    text = "可以依照《中华人民共和国行政诉讼法》的规定提起诉讼。See the [travel policy](policies/travel.md) or [above](#top)."
    assert references_in(text) == [
        Reference("中华人民共和国行政诉讼法"),
        Reference("travel policy", target="policies/travel.md"),
    ]


def test_own_paragraph_words_and_repeats_are_not_references() -> None:
    """前款 and 本条 point at the paragraph itself; a repeated citation is read once."""
    text = "前款规定的期限，依照本条执行。依照本法第十条。依照本法第十条。"
    assert references_in(text) == [Reference(SELF, 10)]


def test_article_numbers_in_chinese_and_digits() -> None:
    """Chinese numerals and digits read alike; an article is recognised at the start of its line only."""
    assert [article_number(n) for n in ("二十四", "一百八十八", "1260", "十")] == [24, 188, 1260, 10]
    text = "第一百八十八条 向人民法院请求保护民事权利的诉讼时效期间为三年。\n依照第二十条的规定。"
    assert cites_article(text, 188) and not cites_article(text, 20)


def test_full_width_digits_read_as_the_article_they_number() -> None:
    """本法第１２条 (full-width digits, as a pasted or scanned statute writes them) names article 12, the same
    numerals the chunker reads an article head with (core.text.ARTICLE_NUMBER)."""
    assert references_in("依照本法第１２条的规定处理。") == [Reference(SELF, 12)]
    assert cites_article("第１２条 用人单位应当……", 12)
