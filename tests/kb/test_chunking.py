"""Chunking Markdown along headings, law articles and sentence ends, within a token limit."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from adapters.knowledge.document_readers import iter_document_paths, read_document
from core.budget import count_tokens
from core.knowledge.chunking import chunk_markdown, embedding_text
from core.models import Chunk

LAWS = Path("/work/shared/data/zh_laws")
RECONSIDERATION_2023 = LAWS / "诉讼与非诉讼程序法" / "行政复议法(2023-09-01).md"
ZH_SENTENCES = [
    "行政复议机关收到行政复议申请后应当在五日内进行审查。",
    "对不符合规定的行政复议申请决定不予受理并说明理由！",
    "申请人是否可以补正材料？",
    "补正通知应当一次性载明需要补正的事项；",
    "审查期限届满而行政复议机关未作出不予受理决定的视为受理……",
]
CHINESE_END = re.compile(r"[。！？；…]$")


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def assert_well_formed(chunks: list[Chunk], max_tokens: int) -> None:
    assert [c.position for c in chunks] == list(range(len(chunks)))
    for chunk in chunks:
        assert chunk.text and chunk.text == chunk.text.strip()
        assert chunk.tokens == count_tokens(chunk.text) <= max_tokens


@pytest.mark.parametrize("markdown", ["", "   \n\n\t\n", "\u200b\n", "---\ntitle: x\n---\n", "<!-- only -->"])
def test_empty_input_gives_no_chunks(markdown: str) -> None:
    """Empty, whitespace-only, comment-only or front-matter-only input gives no chunks."""
    assert chunk_markdown(markdown) == []


def test_max_tokens_must_be_positive() -> None:
    """A non-positive limit is a programming error."""
    with pytest.raises(ValueError):
        chunk_markdown("text", max_tokens=0)


def test_chinese_without_spaces_splits_at_sentence_ends() -> None:
    """A long Chinese paragraph with no spaces splits only after 。！？；… and loses no character."""
    paragraph = "".join(ZH_SENTENCES * 12)
    chunks = chunk_markdown(paragraph, max_tokens=60)
    assert len(chunks) > 5
    assert_well_formed(chunks, 60)
    assert "".join(c.text for c in chunks) == paragraph
    assert all(CHINESE_END.search(c.text) for c in chunks)


def test_huge_english_paragraph_splits_at_sentence_ends() -> None:
    """One huge English paragraph splits after '. ', '! ', '? ' with every chunk within the limit."""
    sentences = [
        f"Sentence number {i} explains the retention policy for backups in detail." for i in range(300)
    ]
    sentences[7] = "Is this a question? Yes! It is."
    paragraph = " ".join(sentences)
    chunks = chunk_markdown(paragraph, max_tokens=100)
    assert len(chunks) > 10
    assert_well_formed(chunks, 100)
    assert squash("".join(c.text for c in chunks)) == squash(paragraph)
    assert all(c.text.endswith((".", "!", "?")) for c in chunks)
    assert [c.heading_path for c in chunks] == [()] * len(chunks)


def test_sentence_longer_than_limit_splits_at_clauses() -> None:
    """A single sentence over the limit is cut after clause marks (，、,) rather than anywhere."""
    sentence = "，".join(f"第{i}项规定的申请人和被申请人应当依法提交材料" for i in range(40)) + "。"
    chunks = chunk_markdown(sentence, max_tokens=50)
    assert len(chunks) > 3
    assert_well_formed(chunks, 50)
    assert "".join(c.text for c in chunks) == sentence
    assert all(c.text.endswith("，") for c in chunks[:-1])


def test_clause_longer_than_limit_uses_token_windows_on_whole_characters() -> None:
    """Text with no punctuation at all is cut into token windows that never split a character."""
    text = "垃圾回收" * 150 + "e\u0301" * 100
    chunks = chunk_markdown(text, max_tokens=40)
    assert_well_formed(chunks, 40)
    assert "".join(c.text for c in chunks) == text
    assert not any(c.text.startswith("\u0301") for c in chunks)


def test_long_english_word_run_prefers_spaces() -> None:
    """An over-long run of words without punctuation is cut at a space, not inside a word."""
    text = " ".join(f"word{i}" for i in range(400))
    chunks = chunk_markdown(text, max_tokens=30)
    assert_well_formed(chunks, 30)
    words = {f"word{i}" for i in range(400)}
    assert all(set(c.text.split()) <= words for c in chunks)


def test_heading_paths_follow_the_outline() -> None:
    """Each chunk carries its enclosing headings; a same-level heading replaces its sibling."""
    markdown = (
        "# Guide\n\nIntro.\n\n## Install\n\nRun it.\n\n### Linux\n\nUse apt.\n\n"
        "## Usage ##\n\nCall it.\n\nSetext title\n============\n\nUnder setext.\n\n#### Deep\n\nDeep text.\n"
    )
    chunks = chunk_markdown(markdown)
    assert [(c.heading_path, c.text) for c in chunks] == [
        (("Guide",), "Intro."),
        (("Guide", "Install"), "Run it."),
        (("Guide", "Install", "Linux"), "Use apt."),
        (("Guide", "Usage"), "Call it."),
        (("Setext title",), "Under setext."),
        (("Setext title", "Deep"), "Deep text."),
    ]
    assert [c.position for c in chunks] == list(range(6))


def test_paragraphs_of_a_section_are_packed_up_to_the_limit() -> None:
    """Short paragraphs of one section share a chunk until the limit; sections never mix."""
    body = "\n\n".join(f"Paragraph {i} has a few words in it." for i in range(12))
    chunks = chunk_markdown(f"# A\n\n{body}\n\n# B\n\nAlone.", max_tokens=50)
    assert_well_formed(chunks, 50)
    in_a = [c for c in chunks if c.heading_path == ("A",)]
    assert 1 < len(in_a) < 12
    assert "\n\n".join(c.text for c in in_a) == body
    assert chunks[-1].text == "Alone." and chunks[-1].heading_path == ("B",)


def test_front_matter_comments_and_zero_width_spaces_are_dropped() -> None:
    """Front matter, HTML comments (even multi-line) and zero-width spaces never reach chunk text."""
    markdown = (
        "---\nbookHidden: true\n---\n\n# 某法 <!-- 标题注释 -->\n\n2021年1月1日 施行\n\n<!-- INFO END -->\n"
        "<!-- 多行\n注释 -->\n\n## 第一章 总则\n\n\u200b\n第一条 内容一。\n"
    )
    chunks = chunk_markdown(markdown)
    assert [(c.heading_path, c.text) for c in chunks] == [
        (("某法",), "2021年1月1日 施行"),
        (("某法", "第一章 总则"), "第一条 内容一。"),
    ]


def test_code_fence_is_kept_whole_and_opaque() -> None:
    """A fitting code fence stays in one chunk with its blank lines, and '#' lines inside are not headings."""
    fence = "```python\n# not a heading\n\nx = 1\n\n\ny = 2\n```"
    chunks = chunk_markdown(f"# Code\n\nBefore.\n\n{fence}\n\nAfter.\n", max_tokens=400)
    assert len(chunks) == 1
    assert chunks[0].text == f"Before.\n\n{fence}\n\nAfter."
    assert chunks[0].heading_path == ("Code",)


def test_long_code_fence_splits_at_line_ends() -> None:
    """A code fence over the limit is split between lines, never inside one."""
    lines = [f"result_{i} = compute(value_{i}, factor={i}). total()" for i in range(80)]
    fence = "```\n" + "\n".join(lines) + "\n```"
    chunks = chunk_markdown(fence, max_tokens=60)
    assert_well_formed(chunks, 60)
    got = [line for c in chunks for line in c.text.split("\n")]
    assert got == ["```", *lines, "```"]


LAW = (
    "# 某某法\n\n## 第一章 总则\n\n第一条 短条文。\n\n第二条 第二条正文。\n\n前款所称事项，包括下列各项：\n\n"
    "（一）甲；\n\n（二）乙。\n\n第三条之一　全角空格后的正文。\n\n## 第二章 附则\n\n第四条 本法自公布之日起施行。\n"
)
ARTICLE_2 = "第二条 第二条正文。\n\n前款所称事项，包括下列各项：\n\n（一）甲；\n\n（二）乙。"


def test_law_articles_of_a_section_are_packed_whole() -> None:
    """Articles of one section share a chunk when they fit; a chapter heading always starts a new chunk."""
    chunks = chunk_markdown(LAW)
    assert [(c.heading_path, c.text) for c in chunks] == [
        (("某某法", "第一章 总则"), f"第一条 短条文。\n\n{ARTICLE_2}\n\n第三条之一　全角空格后的正文。"),
        (("某某法", "第二章 附则"), "第四条 本法自公布之日起施行。"),
    ]


def test_an_article_is_never_cut_between_chunks_when_it_fits() -> None:
    """With a tight limit, chunks break at article starts and keep each article's paragraphs together."""
    limit = count_tokens(ARTICLE_2) + 2
    chunks = chunk_markdown(LAW, max_tokens=limit)
    assert_well_formed(chunks, limit)
    assert [c.text for c in chunks] == [
        "第一条 短条文。",
        ARTICLE_2,
        "第三条之一　全角空格后的正文。",
        "第四条 本法自公布之日起施行。",
    ]


def test_long_article_splits_within_the_limit() -> None:
    """An article longer than the limit splits at paragraph and sentence ends, first piece naming it."""
    items = "\n\n".join(f"（{i}）{ZH_SENTENCES[i % 5]}" for i in range(30))
    chunks = chunk_markdown(
        f"## 第一章\n\n第九条 下列情形之一的：\n\n{items}\n\n第十条 下一条。", max_tokens=80
    )
    assert_well_formed(chunks, 80)
    article = [c for c in chunks if not c.text.startswith("第十条")]
    assert len(article) > 2 and article[0].text.startswith("第九条")
    assert chunks[-1].text == "第十条 下一条。"


def test_over_long_article_splits_evenly_without_a_tail_fragment() -> None:
    """An article over the limit is split into as few chunks as greedy packing, of similar sizes."""
    paragraphs = ["第三十条 " + ZH_SENTENCES[0] * 2, *(ZH_SENTENCES[i % 5] * 2 for i in range(1, 4))]
    article = "\n\n".join(paragraphs)
    limit = (
        count_tokens("\n\n".join(paragraphs[:3])) + 1
    )  # greedy would give 3 paragraphs + a 1-paragraph tail
    chunks = chunk_markdown(article, max_tokens=limit)
    assert_well_formed(chunks, limit)
    assert [c.text for c in chunks] == ["\n\n".join(paragraphs[:2]), "\n\n".join(paragraphs[2:])]


def test_wrapped_law_heading_is_rejoined() -> None:
    """A law chapter heading wrapped onto a short second line becomes one heading."""
    markdown = "## 第五章 没有划入军事禁区、军事管理区的\n\n军事设施的保护\n\n第三十条 正文。\n"
    chunks = chunk_markdown(markdown)
    assert [(c.heading_path, c.text) for c in chunks] == [
        (("第五章 没有划入军事禁区、军事管理区的军事设施的保护",), "第三十条 正文。")
    ]


def test_reconsideration_law_article_20() -> None:
    """In the real 行政复议法(2023) each of the 90 articles is whole in one chunk; article 20 opens its section's."""
    chunks = chunk_markdown(read_document(RECONSIDERATION_2023).markdown)
    assert_well_formed(chunks, 400)
    starts = [
        m.group(1) for c in chunks for m in re.finditer(r"(?:^|\n\n)(第[一二三四五六七八九十]+条) ", c.text)
    ]
    assert len(starts) == len(set(starts)) == 90
    (article_20,) = [c for c in chunks if "第二十条 " in c.text]
    assert article_20.heading_path == ("中华人民共和国行政复议法", "第二章 行政复议申请", "第三节 申请的提出")
    assert article_20.text.startswith("第二十条 公民、法人或者其他组织认为行政行为侵犯其合法权益的")
    assert "六十日内提出行政复议申请" in article_20.text
    assert chunks[0].heading_path == ("中华人民共和国行政复议法",)
    assert chunks[0].text.startswith("1999年4月29日")


def test_no_chunk_exceeds_the_limit_over_all_laws() -> None:
    """Across all 385 zh_laws files every chunk is non-empty, within 400 tokens and free of comments."""
    total = 0
    for path in iter_document_paths([LAWS]):
        chunks = chunk_markdown(read_document(path).markdown, max_tokens=400)
        assert [c.position for c in chunks] == list(range(len(chunks)))
        for chunk in chunks:
            assert 0 < chunk.tokens <= 400, (path.name, chunk.position)
            assert "<!--" not in chunk.text and "\u200b" not in chunk.text
        total += len(chunks)
    assert total > 10000


def test_embedding_text_prepends_title_and_heading_path() -> None:
    """The text to embed is title > headings, then the chunk, without repeating the title."""
    chunk = Chunk("第二十条 正文。", ("中华人民共和国行政复议法", "第二章 行政复议申请"), 5, 8)
    assert embedding_text(chunk, document_title="中华人民共和国行政复议法") == (
        "中华人民共和国行政复议法 > 第二章 行政复议申请\n第二十条 正文。"
    )
    assert embedding_text(chunk, document_title="行政复议法(2023-09-01)") == (
        "行政复议法(2023-09-01) > 中华人民共和国行政复议法 > 第二章 行政复议申请\n第二十条 正文。"
    )
    assert embedding_text(Chunk("Body.", (), 0, 2), document_title="") == "Body."


def test_a_chunk_continuing_a_split_article_knows_the_article() -> None:
    """The chunks after the first of an article split over several carry its number (Location.within);
    a chunk opening with an article, and the first chunk of another section, carry none."""
    items = "\n\n".join(f"（{i}）{ZH_SENTENCES[i % 5]}" for i in range(30))
    chunks = chunk_markdown(
        f"## 第一章\n\n第九条 下列情形之一的：\n\n{items}\n\n第十条 下一条。\n\n## 第二章\n\n本章的说明。",
        max_tokens=80,
    )
    ninth = [c for c in chunks if c.heading_path == ("第一章",) and not c.text.startswith("第十条")]
    assert len(ninth) > 2
    assert [c.location.within for c in ninth] == ["", *["第九条"] * (len(ninth) - 1)]
    assert [c.location.within for c in chunks if c.text in ("第十条 下一条。", "本章的说明。")] == ["", ""]
