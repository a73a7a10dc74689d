"""Citations of one document and heading say what tells them apart: the article or section, else the place."""

from __future__ import annotations

from dataclasses import replace

from core.answering.answer import citations, evidence_block, part_label, render_sources
from core.models import Hit, Location
from core.record import CitedSource


def hit(n: int, content: str, *, heading: str = "第二章 劳动合同的订立", position: int = 0) -> Hit:
    return Hit(f"c{n}", content, 0.9, "laws", "d1", "劳动合同法", heading, "/laws/ldht.md", position)


def test_paragraphs_sharing_document_and_heading_show_their_article_or_place() -> None:
    """Three cited paragraphs of one heading get 第十九条 / 第二十一条 / ¶ 8; one under another heading none."""
    evidence = [
        hit(1, "第十九条 劳动合同期限三个月以上不满一年的,试用期不得超过一个月。"),
        hit(2, "第二十一条 在试用期中,除劳动者有本法第三十九条规定的情形外,用人单位不得解除劳动合同。"),
        hit(3, "劳动合同仅约定试用期的,试用期不成立。", position=7),
        hit(
            4, "第三十六条 用人单位与劳动者协商一致,可以解除劳动合同。", heading="第四章 劳动合同的解除和终止"
        ),
    ]
    cited = citations("一个月 [1];不得解除 [2];不成立 [3];协商 [4]", evidence)
    assert [item.part for item in cited] == ["第十九条", "第二十一条", "¶ 8", ""]
    sources = render_sources(cited, "zh").splitlines()
    assert sources[1] == "[1] 劳动合同法 第十九条 — 第二章 劳动合同的订立"
    assert sources[4] == "[4] 劳动合同法 — 第四章 劳动合同的解除和终止"


def test_the_part_is_stored_and_read_back_and_absent_when_empty() -> None:
    """A stored citation keeps its part; one without a part stores no key for it."""
    item = CitedSource(2, "劳动合同法", "第二章", "/l.md", "c2", part="第二十一条")
    assert CitedSource.from_json(item.to_json()) == item
    assert "part" not in CitedSource(1, "a").to_json()


def test_part_labels_in_english_and_chinese() -> None:
    """Article / Section / § numbers and 第N条/章/节 are found near the paragraph's start."""
    assert part_label("Section 3.2 Travel must be booked through the portal.") == "Section 3.2"
    assert part_label("See Article 5 for exceptions.") == "Article 5"
    assert part_label("第三节 非全日制用工") == "第三节"
    assert part_label("Plain text without a number.") == ""


def test_a_chunk_of_several_articles_is_cited_by_the_article_its_quoted_sentence_is_under() -> None:
    """A chunk packing 第十三条 and 第十七条, quoted for 第十七条's sentence, is cited as 第十七条 (not the article
    it opens with); an article a sentence refers to (本法第三十九条) is no label; a paraphrase keeps the first."""
    evidence = [
        hit(
            1,
            "第十三条 自然人从出生时起到死亡时止,具有民事权利能力。\n\n第十七条 十八周岁以上的自然人为成年人。",
        ),
        hit(2, "第二十一条 在试用期中,除劳动者有本法第三十九条规定的情形外,用人单位不得解除劳动合同。"),
        hit(3, "第二十五条 除本法第二十二条规定的情形外,用人单位不得与劳动者约定由劳动者承担违约金。"),
    ]
    answer = (
        "- 第十七条 十八周岁以上的自然人为成年人。 [1]\n"
        "- 除劳动者有本法第三十九条规定的情形外,用人单位不得解除劳动合同。 [2]\n"
        "- 违约金一般不能约定。 [3]"
    )
    assert [item.part for item in citations(answer, evidence)] == ["第十七条", "第二十一条", "第二十五条"]


def test_a_chunk_continuing_an_article_is_cited_by_that_article() -> None:
    """A chunk that begins inside 第七十八条 (Location.within) is cited as 第七十八条, not as the article a
    sentence of it refers to (本法第三十九条) nor by its place, whether quoted word for word or not."""
    rest = hit(
        1, "（六）依照本法第三十九条规定应当减刑的。\n\n减刑以后实际执行的刑期不能少于原判刑期的二分之一。"
    )
    continued = replace(rest, location=Location(within="第七十八条"))
    nextone = hit(2, "第七十九条 对于犯罪分子的减刑,由中级以上人民法院按照审判监督程序进行审理。")
    quoted = "- 减刑以后实际执行的刑期不能少于原判刑期的二分之一。 [1]\n- 由中级以上人民法院审理。 [2]"
    assert [item.part for item in citations(quoted, [continued, nextone])] == ["第七十八条", "第七十九条"]
    assert [item.part for item in citations("刑期至少一半 [1],法院审理 [2]", [continued, nextone])] == [
        "第七十八条",
        "第七十九条",
    ]


def test_the_evidence_a_model_reads_names_the_article_a_chunk_continues() -> None:
    """The evidence block names a continuation chunk's article beside its document, so a model can cite it."""
    continued = Hit(
        "c1",
        "（六）对国家和社会有其他重大贡献的。",
        0.9,
        "laws",
        "d",
        "刑法",
        "第六节 减刑",
        location=Location(within="第七十八条"),
    )
    assert 'document="刑法 第七十八条 | 第六节 减刑"' in evidence_block([continued]).text
