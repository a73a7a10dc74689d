"""Reading Markdown, text and HTML files (encodings, binary detection) and walking folders for documents."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from adapters.knowledge.document_readers import (
    SUPPORTED_SUFFIXES,
    UnreadableDocument,
    iter_document_paths,
    read_document,
)

LAWS = Path("/work/shared/data/zh_laws")
RECONSIDERATION_2023 = LAWS / "诉讼与非诉讼程序法" / "行政复议法(2023-09-01).md"
PNG_BYTES = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489") + b"\x00" * 32


def write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8")
    else:
        path.write_bytes(data)
    return path


def test_supported_suffixes() -> None:
    """Markdown, text, HTML, CSV, PDF, Office Open XML and zip archives are supported, nothing else."""
    text = {".md", ".markdown", ".txt", ".text", ".html", ".htm", ".csv", ".tsv"}
    office = {".pdf", ".docx", ".docm", ".pptx", ".pptm", ".xlsx", ".xlsm"}
    assert frozenset(text | office | {".zip"}) == SUPPORTED_SUFFIXES


def test_markdown_title_name_hash_and_newlines(tmp_path: Path) -> None:
    """A Markdown file keeps its text (CRLF normalised); title is the first H1, name the stem, hash of bytes."""
    raw = "intro line\r\n\r\n# 中华人民共和国测试法 <!-- 注释 -->\r\n\r\n## 第一章 总则\r\n\r\n第一条 内容。\r\n".encode()
    doc = read_document(write(tmp_path / "测试法(2020-01-01).md", raw))
    assert doc.name == "测试法(2020-01-01)"
    assert doc.title == "中华人民共和国测试法"
    assert doc.content_hash == hashlib.sha256(raw).hexdigest()
    assert "\r" not in doc.markdown
    assert "## 第一章 总则\n\n第一条 内容。" in doc.markdown
    assert doc.path == tmp_path / "测试法(2020-01-01).md"


def test_markdown_title_ignores_code_fences_and_falls_back_to_the_first_heading_then_the_name(
    tmp_path: Path,
) -> None:
    """A '# ' line inside a code fence is not a title; without an H1 the first heading is the title;
    without any heading, the file name."""
    doc = read_document(write(tmp_path / "notes.markdown", "```sh\n# not a title\n```\n\n## Sub\n\nbody\n"))
    assert doc.title == "Sub"
    assert (
        read_document(write(tmp_path / "Hank Snow-2b1e0c.md", "# Hank Snow\n\nA singer.\n")).title
        == "Hank Snow"
    )
    assert read_document(write(tmp_path / "plain.md", "no heading at all\n")).title == "plain"
    html = "<html><body><h2>Release notes</h2><p>x</p></body></html>"
    assert read_document(write(tmp_path / "page.html", html)).title == "Release notes"


def test_plain_text_is_kept_as_is(tmp_path: Path) -> None:
    """A text file's content is its Markdown; its title is its name."""
    doc = read_document(write(tmp_path / "readme.txt", "First paragraph.\n\nSecond paragraph.\n"))
    assert doc.markdown == "First paragraph.\n\nSecond paragraph.\n"
    assert doc.title == "readme"


def test_html_becomes_markdown(tmp_path: Path) -> None:
    """HTML headings become '#' lines, blocks are blank-line separated, entities decoded, scripts dropped."""
    html = """<!DOCTYPE html><html><head><title>Guide &amp; FAQ</title>
    <style>body { color: red }</style><script>var secret = "x";</script></head>
    <body><h1>Setup &lt;fast&gt;</h1><p>Install   the
    tool&nbsp;now.</p><h3>Details</h3><ul><li>one</li><li>two &#8212; more</li></ul>
    <table><tr><th>key</th><th>value</th></tr><tr><td>a</td><td>1</td></tr></table>
    <script>alert(1)</script><p>中文段落&ldquo;引号&rdquo;。</p></body></html>"""
    doc = read_document(write(tmp_path / "guide.html", html))
    assert doc.title == "Guide & FAQ"
    assert doc.markdown == (
        "# Setup <fast>\n\nInstall the tool now.\n\n### Details\n\n- one\n\n- two — more\n\n"
        "key | value\n\na | 1\n\n中文段落“引号”。\n"
    )
    assert "secret" not in doc.markdown and "alert" not in doc.markdown and "color" not in doc.markdown


def test_html_title_falls_back_to_h1_and_pre_is_kept(tmp_path: Path) -> None:
    """Without <title> the first h1 is the title; <pre> keeps its lines as a code fence."""
    html = "<h1>Only heading</h1><pre>line 1\n    line 2</pre><div>after</div>"
    doc = read_document(write(tmp_path / "page.htm", html))
    assert doc.title == "Only heading"
    assert doc.markdown == "# Only heading\n\n```\nline 1\n    line 2\n```\n\nafter\n"


def test_empty_file_is_an_empty_document(tmp_path: Path) -> None:
    """An empty file is not an error: it gives an empty document titled by its name."""
    doc = read_document(write(tmp_path / "empty.md", b""))
    assert (doc.markdown, doc.title) == ("", "empty")
    assert doc.content_hash == hashlib.sha256(b"").hexdigest()


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (PNG_BYTES, "PNG"),
        (b"some text\x00\x01\x02\x00 with NULs" + bytes(range(256))[::4], "NUL"),
        (bytes(range(1, 32)) * 20, "control"),
    ],
    ids=["png", "nul", "control"],  # fixed ids: parallel workers must collect the same tests
)
def test_binary_files_are_unreadable(tmp_path: Path, data: bytes, reason: str) -> None:
    """Images, NUL bytes and control-character soup raise UnreadableDocument saying 'binary'."""
    with pytest.raises(UnreadableDocument) as caught:
        read_document(write(tmp_path / "disguised.md", data))
    assert "binary" in caught.value.reason and reason in caught.value.reason
    assert caught.value.path == tmp_path / "disguised.md"


def test_gb18030_file_is_decoded(tmp_path: Path) -> None:
    """A legacy GB18030/GBK Chinese file is decoded correctly."""
    text = "# 行政复议\n\n第二十条 可以自知道之日起六十日内提出行政复议申请。\n"
    doc = read_document(write(tmp_path / "legacy.md", text.encode("gb18030")))
    assert doc.markdown == text
    assert doc.title == "行政复议"


def test_utf8_bom_and_utf16_are_decoded(tmp_path: Path) -> None:
    """A UTF-8 BOM is stripped before the title is found; UTF-16 with a BOM is decoded."""
    doc = read_document(write(tmp_path / "bom.md", "\ufeff# 标题\n\n正文\n".encode()))
    assert doc.markdown == "# 标题\n\n正文\n"
    assert doc.title == "标题"
    wide = read_document(write(tmp_path / "wide.txt", "宽字符 text\n".encode("utf-16")))
    assert wide.markdown == "宽字符 text\n"


def test_undecodable_text_is_unreadable(tmp_path: Path) -> None:
    """Bytes valid in neither UTF-8 nor GB18030 raise UnreadableDocument."""
    with pytest.raises(UnreadableDocument, match="undecodable"):
        read_document(write(tmp_path / "bad.txt", b"abc \x81\x20 def \xff\xff"))


def test_unsupported_missing_and_directory_paths_are_unreadable(tmp_path: Path) -> None:
    """Unsupported types, missing files and directories raise UnreadableDocument with a reason."""
    with pytest.raises(UnreadableDocument, match=r"unsupported file type '\.py'"):
        read_document(write(tmp_path / "a.py", b"print(1)"))
    with pytest.raises(UnreadableDocument, match=r"corrupt PDF"):
        read_document(write(tmp_path / "a.pdf", b"%PDF-1.4"))
    with pytest.raises(UnreadableDocument, match="file not found"):
        read_document(tmp_path / "missing.md")
    (tmp_path / "folder.md").mkdir()
    with pytest.raises(UnreadableDocument, match="directory"):
        read_document(tmp_path / "folder.md")


def test_folder_walk_is_sorted_recursive_and_skips_hidden(tmp_path: Path) -> None:
    """Folders are walked in sorted order and hidden entries skipped; unsupported files are yielded (for
    ingest to report with their reason)."""
    root = tmp_path / "kb"
    for name in (
        "b.md",
        "a/z.txt",
        "a/c/deep.html",
        "a/.hidden.md",
        ".git/config.md",
        "A.MD",
        "image.png",
        "notes.pdf",
        "c.htm",
        "~$lock.docx",
    ):
        write(root / name, "x")
    walked = [p.relative_to(root).as_posix() for p in iter_document_paths([root])]
    assert walked == ["A.MD", "a/c/deep.html", "a/z.txt", "b.md", "c.htm", "image.png", "notes.pdf"]
    assert walked == [p.relative_to(root).as_posix() for p in iter_document_paths([root])]


def test_explicit_paths_are_yielded_once_in_argument_order(tmp_path: Path) -> None:
    """Explicit files come in argument order, even unsupported or missing; duplicates appear once."""
    pdf = write(tmp_path / "z.pdf", b"%PDF")
    note = write(tmp_path / "docs" / "note.md", "x")
    hidden = write(tmp_path / ".secret.md", "x")
    missing = tmp_path / "gone.md"
    given = [pdf, tmp_path / "docs", note, hidden, missing]
    assert list(iter_document_paths(given)) == [pdf, note, hidden, missing]


def test_real_law_file_is_read() -> None:
    """A real law from zh_laws reads with its H1 title, dated name and full text."""
    doc = read_document(RECONSIDERATION_2023)
    assert doc.name == "行政复议法(2023-09-01)"
    assert doc.title == "中华人民共和国行政复议法"
    assert "第二十条 公民、法人或者其他组织认为行政行为侵犯其合法权益的" in doc.markdown
    assert "<!-- INFO END -->" in doc.markdown
    assert doc.content_hash == hashlib.sha256(RECONSIDERATION_2023.read_bytes()).hexdigest()


def test_whole_law_folder_walks_to_385_files() -> None:
    """Walking zh_laws finds all 385 Markdown files, and every one reads without error."""
    paths = list(iter_document_paths([LAWS]))
    assert len(paths) == 385
    assert all(read_document(p).name for p in paths)


@pytest.mark.parametrize(
    ("front_matter", "link"),
    [
        ("url: https://wiki.example.com/pages/42", "https://wiki.example.com/pages/42"),
        ("link: http://intranet/travel", "http://intranet/travel"),
        ("url: javascript:alert(1)", ""),
        ("url: file:///etc/passwd", ""),
        ("url: https://a.example.com/x y", ""),
    ],
)
def test_a_markdown_files_metadata_url_is_its_link_when_it_is_a_web_address(
    tmp_path: Path, front_matter: str, link: str
) -> None:
    """`url:` (or `link:`) in the front matter is where the document's citations point; any other scheme,
    or an address with spaces, is no link."""
    path = tmp_path / "page.md"
    path.write_text(f"---\ntitle: Page\n{front_matter}\n---\n\nText.\n", encoding="utf-8")
    assert read_document(path).link == link
