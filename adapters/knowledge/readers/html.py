"""HTML (a saved page, a Confluence or Notion export) as Markdown: headings, paragraphs, items, rows.

Written on the standard library's html.parser: what is needed is the text in reading order with its
headings, which a few tags decide; a full DOM library would add a dependency for no better result.
"""

from __future__ import annotations

from html.parser import HTMLParser

from adapters.knowledge.readers.base import Parsed
from adapters.knowledge.readers.text import markdown_title
from core.models import DocumentPart

_BLOCK_TAGS = frozenset(
    "p div section article main header footer nav aside blockquote li dt dd tr table thead tbody tfoot "
    "ul ol dl figure figcaption address hr form fieldset details summary".split()
)
_HEADING_TAGS = {f"h{n}": n for n in range(1, 7)}
_DROPPED_TAGS = frozenset({"script", "style", "noscript", "template", "svg"})
_CELL_TAGS = frozenset({"td", "th"})


class _MarkdownBuilder(HTMLParser):
    """Collects HTML as blank-line separated Markdown blocks (headings, paragraphs, items, rows)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[str] = []
        self.title = ""
        self._inline: list[str] = []
        self._dropped = 0
        self._heading = 0
        self._pre = 0
        self._in_title = False
        self._title_parts: list[str] = []
        self._cells: list[str] | None = None
        self._prefix = ""

    def _flush(self) -> None:
        if self._pre:
            return
        if self._cells is not None and not self._heading:
            self._inline.append(" ")  # a block inside a table cell stays in the cell
            return
        raw = "".join(self._inline)
        self._inline = []
        text = " ".join(raw.split())
        if not text:
            return
        if self._heading:
            self.blocks.append("#" * self._heading + " " + text)
        else:
            self.blocks.append(self._prefix + text)
        self._prefix = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _DROPPED_TAGS:
            self._dropped += 1
        elif tag == "title":
            self._in_title = True
        elif tag in _HEADING_TAGS:
            self._flush()
            self._heading = _HEADING_TAGS[tag]
        elif tag == "pre":
            self._flush()
            self._pre += 1
        elif tag == "br":
            self._inline.append("\n" if self._pre else " ")
        elif tag == "tr":
            self._flush()
            self._cells = []
        elif tag in _CELL_TAGS:
            self._flush_cell()
        elif tag in _BLOCK_TAGS:
            self._flush()
            if tag == "li":
                self._prefix = "- "

    def handle_endtag(self, tag: str) -> None:
        if tag in _DROPPED_TAGS:
            self._dropped = max(0, self._dropped - 1)
        elif tag == "title":
            self._in_title = False
            self.title = self.title or " ".join("".join(self._title_parts).split())
        elif tag in _HEADING_TAGS:
            self._flush()
            self._heading = 0
        elif tag == "pre" and self._pre:
            code = "".join(self._inline).strip("\n")
            self._inline = []
            self._pre -= 1
            if code.strip():
                self.blocks.append("```\n" + code + "\n```")
        elif tag in _CELL_TAGS:
            self._flush_cell()
        elif tag == "tr":
            self._end_row()
        elif tag in _BLOCK_TAGS:
            self._flush()

    def _flush_cell(self) -> None:
        if self._cells is None:
            return
        cell = " ".join("".join(self._inline).split())
        self._inline = []
        if cell:
            self._cells.append(cell)

    def _end_row(self) -> None:
        self._flush_cell()
        if self._cells:
            self.blocks.append(" | ".join(self._cells))
        self._cells = None

    def handle_data(self, data: str) -> None:
        if self._dropped:
            return
        if self._in_title:
            self._title_parts.append(data)
            return
        self._inline.append(data)

    def close(self) -> None:
        super().close()
        if self._cells is not None:
            self._end_row()
        self._pre = 0
        self._flush()


def html_to_markdown(html: str) -> tuple[str, str]:
    """(Markdown-ish text, <title> text): h1..h6 as '#' lines, blank-line separated blocks, no scripts."""
    builder = _MarkdownBuilder()
    builder.feed(html)
    builder.close()
    markdown = "\n\n".join(builder.blocks) + ("\n" if builder.blocks else "")
    return markdown, builder.title


def read_html(text: str) -> Parsed:
    """An HTML page as one part; its title is <title>, else its first <h1>, else its first heading."""
    markdown, title = html_to_markdown(text)
    return Parsed((DocumentPart(markdown),), title=title or markdown_title(markdown))
