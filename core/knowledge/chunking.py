"""Chunking Markdown (and documents read as parts) into retrievable paragraphs along headings and sentences.

How a document becomes chunks:

1. Front matter (``---`` ... ``---`` at the top), HTML comments (``<!-- INFO END -->``), zero-width
   spaces and thematic breaks are dropped. Code fences are opaque blocks (nothing inside is parsed).
2. ATX (``#``..``######``) and one-line setext headings open sections; ``heading_path`` is the tuple of
   enclosing heading texts. A law heading (``第N章/节/编``) wrapped onto a short unpunctuated second
   line is rejoined. Chunk text never repeats the headings: :func:`embedding_text` prepends the
   document title and heading path for embedding and keyword indexing.
3. Within a section, units are greedily packed (joined by a blank line) while the chunk stays within
   ``max_tokens`` (cl100k tokens, ``core.budget.count_tokens``). A unit is a paragraph, a code fence,
   or a law article: a paragraph starting ``第N条`` plus the paragraphs that follow it up to the next
   article or heading (``前款所称...``, ``（一）...`` items). A unit that fits is never cut across
   chunks; a unit over the limit is split alone into evenly sized chunks (no small tail fragment).
4. Why articles are packed rather than one per chunk (measured on all 385 zh_laws files, offline
   USE-m3 embeddings, jieba + bm25s, 20 hand-labelled questions such as 试用期最长多久 or
   不服复议决定多久内起诉, top-3 rate per mode embedding / keywords / RRF / relative-score fusion):
   one article per chunk (26.6k chunks) .55 / .60 / .55 / .60; whole articles packed per section
   (12.7k chunks) .65 / .65 / .70 / .85. A lone article is often a single short sentence whose
   embedding and BM25 length are dominated by noise, while its neighbours in the same section share
   its topic. ``行政复议申请期限`` finds 行政复议法(2023) article 20 at ranks 2 / 3 / 1 / 1 (per-article:
   2 / 3 / 1 / 2). Articles stay whole so a hit never shows half an article.
5. A paragraph over the limit is split at sentence ends (Chinese ``。！？；…``, English ``.!?`` followed
   by a space, newlines), a sentence over the limit at clause marks (``，、,：:;``), and a clause over
   the limit by the longest token window that ends on a whole character (at a space when there is one
   near the end). Splitting is lossless: the pieces of a paragraph concatenate back to it (up to the
   whitespace stripped at chunk edges). Code fences are split at line ends only. Splitting and the
   packing of pieces live in :mod:`core.knowledge.chunk_packing`.
6. A document read from a PDF, a deck or a spreadsheet comes as parts (core.models.DocumentPart: a
   page, a slide, a sheet row), each with its location. Headings carry from part to part unless a part
   names its own (a slide's title, a sheet's name). A chunk never holds text of two pages, slides or
   sheets, so its citation names one page; rows of one sheet pack together and the chunk spans them.
   Cutting at page ends splits the few paragraphs that run over a page break; a page is the unit a
   reader looks up, so that is the cost of citing to the page.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from core.knowledge.chunk_packing import count_tokens, fits, pack_balanced, split_lines, split_sentences
from core.models import Chunk, DocumentPart
from core.text import ARTICLE_NUMBER, NUMERAL

DEFAULT_MAX_TOKENS = 400
# raised when chunks, their metadata or their embedded text change, so that the next ingest chunks again
# (c2: Location.within; c3: within in the embedded trail)
CHUNKER_VERSION = "c3"

# YAML front matter (group 1: its body, absent when empty); the Markdown reader reads it as metadata
FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)?(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_INVISIBLE = re.compile(r"[\u200b\u2060\ufeff]")
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_THEMATIC_BREAK = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_ARTICLE = re.compile(rf"^{ARTICLE_NUMBER}(?:\s|$)")  # a paragraph opening an article
_ARTICLE_LINE = re.compile(rf"(?:^|\n)({ARTICLE_NUMBER})(?=\s|$)")  # any line of a text opening one
_LAW_HEADING = re.compile(rf"^第[{NUMERAL}]+(?:编|分编|章|节)")
_HEADING_TAIL_MAX_CHARS = 30
_SEPARATOR_TOKENS = 1  # "\n\n" between two stripped blocks
_ESTIMATE_MARGIN = 8  # below max_tokens - slack the additive estimate is trusted while packing


@dataclass(frozen=True, slots=True)
class _Block:
    kind: str  # "heading" | "paragraph" | "code"
    text: str
    level: int = 0
    part: int = 0  # index of the DocumentPart it came from


@dataclass(frozen=True, slots=True)
class _Piece:
    """Text bound for one chunk, with the first and last DocumentPart it holds text of."""

    text: str
    first: int
    last: int


def _segments(markdown: str) -> Iterator[tuple[bool, str]]:
    """(is_code_fence, text) segments in order; a fence runs to its closing fence or the end."""
    lines = markdown.split("\n")
    buffer: list[str] = []
    index = 0
    while index < len(lines):
        opening = _FENCE_OPEN.match(lines[index])
        if not opening:
            buffer.append(lines[index])
            index += 1
            continue
        if buffer:
            yield False, "\n".join(buffer)
            buffer = []
        fence = opening.group(1)
        end = index + 1
        while end < len(lines) and not lines[end].lstrip().startswith(fence):
            end += 1
        yield True, "\n".join(lines[index : end + 1])
        index = end + 1
    if buffer:
        yield False, "\n".join(buffer)


ATTRIBUTE_LIST = re.compile(r"[ \t]*\{:?[ \t]*[#.][^{}]*\}[ \t]*$")  # `## Title {: #id .class }`


def _clean_heading(text: str) -> str:
    """A heading's words, without a trailing attribute list (Python-Markdown's attr_list, Pandoc's {#id})."""
    return " ".join(ATTRIBUTE_LIST.sub("", text).split())


def _text_blocks(text: str) -> Iterator[_Block]:
    """Headings and paragraphs of a fence-free Markdown segment."""
    paragraph: list[str] = []

    def flush() -> Iterator[_Block]:
        body = "\n".join(line.rstrip() for line in paragraph).strip()
        paragraph.clear()
        if body:
            yield _Block("paragraph", body)

    for line in text.split("\n"):
        heading = _ATX.match(line)
        setext = _SETEXT.match(line)
        if heading:
            yield from flush()
            title = _clean_heading(heading.group(2) or "")
            if title:
                yield _Block("heading", title, len(heading.group(1)))
        elif setext and len(paragraph) == 1 and paragraph[0].strip():
            title = _clean_heading(paragraph.pop())
            yield _Block("heading", title, 1 if setext.group(1)[0] == "=" else 2)
        elif not line.strip() or _THEMATIC_BREAK.match(line):
            yield from flush()
        else:
            paragraph.append(line)
    yield from flush()


def _blocks(markdown: str, *, front_matter: bool = True) -> Iterator[_Block]:
    text = markdown.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    if front_matter:
        text = FRONT_MATTER.sub("", text, count=1)
    for is_code, segment in _segments(text):
        if is_code:
            yield _Block("code", segment.strip("\n"))
        else:
            yield from _text_blocks(_INVISIBLE.sub("", _COMMENT.sub("", segment)))


def _fit(block: _Block, max_tokens: int) -> list[str]:
    """The block's text as pieces within the limit (itself when it fits)."""
    if fits(block.text, max_tokens):
        return [block.text]
    splitter = split_lines if block.kind == "code" else split_sentences
    return splitter(block.text, max_tokens)


def _units(blocks: list[_Block]) -> list[tuple[bool, list[_Block]]]:
    """(is_article, blocks) units of one section: an article with its follow-on paragraphs, or one block."""
    units: list[tuple[bool, list[_Block]]] = []
    for block in blocks:
        if block.kind == "paragraph" and _ARTICLE.match(block.text):
            units.append((True, [block]))
        elif units and units[-1][0]:
            units[-1][1].append(block)
        else:
            units.append((False, [block]))
    return units


def _section_pieces(blocks: list[_Block], max_tokens: int) -> list[_Piece]:
    """Chunk texts of one section: whole units (articles, paragraphs) packed within the limit.

    A unit that fits is never cut across chunks; one over the limit is split alone, in its own chunks.
    Packing adds up per-unit counts (plus the separator) and counts exactly only near the limit; the
    finished chunk is always counted exactly and re-packed exactly in the rare case it is over. Each
    piece knows the parts (pages, rows) its text came from.
    """
    groups: list[list[_Piece]] = []
    current: list[_Piece] = []
    current_tokens = 0
    for _, unit in _units(blocks):
        first, last = unit[0].part, unit[-1].part
        pieces = [piece for block in unit for piece in _fit(block, max_tokens)]
        whole = "\n\n".join(pieces)
        tokens = count_tokens(whole)
        if tokens > max_tokens:  # only possible when the unit was split into several pieces
            packed = pack_balanced(pieces, max_tokens, joiner="\n\n")
            groups.extend([current, *[[_Piece(text, first, last)] for text in packed]])
            current, current_tokens = [], 0
            continue
        estimate = current_tokens + _SEPARATOR_TOKENS + tokens
        if current and estimate > max_tokens - _ESTIMATE_MARGIN:
            estimate = count_tokens("\n\n".join([*(p.text for p in current), whole]))
        if current and estimate > max_tokens:
            groups.append(current)
            current, current_tokens = [_Piece(whole, first, last)], tokens
        else:
            current.append(_Piece(whole, first, last))
            current_tokens = estimate
    groups.append(current)
    texts: list[_Piece] = []
    for group in groups:
        if not group:
            continue
        joined = _Piece("\n\n".join(piece.text for piece in group), group[0].first, group[-1].last)
        texts.extend([joined] if fits(joined.text, max_tokens) else _repack(group, max_tokens))
    return texts


def _repack(group: list[_Piece], max_tokens: int) -> list[_Piece]:
    """chunk_packing.pack over pieces, exactly counted, keeping which parts each result holds."""
    packed: list[_Piece] = []
    current: _Piece | None = None
    for piece in group:
        if current is None:
            current = piece
            continue
        candidate = current.text + "\n\n" + piece.text
        if count_tokens(candidate) > max_tokens:
            packed.append(current)
            current = piece
        else:
            current = _Piece(candidate, current.first, piece.last)
    if current is not None:
        packed.append(current)
    return packed


def _places(blocks: list[_Block], parts: Sequence[DocumentPart]) -> Iterator[list[_Block]]:
    """A section's blocks in runs that may share a chunk: same page, slide and sheet."""
    run: list[_Block] = []
    for block in blocks:
        if run and not parts[run[-1].part].location.same_place(parts[block.part].location):
            yield run
            run = []
        run.append(block)
    if run:
        yield run


def _is_heading_tail(block: _Block, following: _Block | None) -> bool:
    """A short unpunctuated line between a law heading and an article or heading is the heading's rest."""
    return (
        block.kind == "paragraph"
        and len(block.text) <= _HEADING_TAIL_MAX_CHARS
        and not re.search(r"[\n。；：，！？.;:!?]", block.text)
        and not _ARTICLE.match(block.text)
        and (following is None or following.kind == "heading" or bool(_ARTICLE.match(following.text)))
    )


def _joined_headings(blocks: list[_Block]) -> list[_Block]:
    """Blocks with law headings wrapped onto a second line ("第五章 ...的" / "军事设施的保护") rejoined."""
    joined: list[_Block] = []
    for index, block in enumerate(blocks):
        previous = joined[-1] if joined else None
        following = blocks[index + 1] if index + 1 < len(blocks) else None
        if (
            previous is not None
            and previous.kind == "heading"
            and previous.level > 0
            and _LAW_HEADING.match(previous.text)
            and _is_heading_tail(block, following)
        ):
            joined[-1] = _Block("heading", previous.text + block.text, previous.level, previous.part)
        else:
            joined.append(block)
    return joined


def _part_blocks(parts: Sequence[DocumentPart]) -> Iterator[_Block]:
    """Every part's blocks in order, tagged with their part; a part with its own heading path opens a
    section there (as a level-0 heading block per heading)."""
    base: tuple[str, ...] | None = None
    for index, part in enumerate(parts):
        if part.heading_path is not None and part.heading_path != base:
            base = part.heading_path
            yield _Block("reset", "", 0, index)
            for title in base:
                yield _Block("heading", title, 0, index)
        for block in _blocks(part.markdown, front_matter=index == 0):
            yield _Block(block.kind, block.text, block.level, index)


def _sections(parts: Sequence[DocumentPart]) -> Iterator[tuple[tuple[str, ...], list[_Block]]]:
    """(heading_path, body blocks) for each section with a body, in document order."""
    path: list[tuple[int, str]] = []
    body: list[_Block] = []
    for block in _joined_headings(list(_part_blocks(parts))):
        if block.kind in ("heading", "reset"):
            if body:
                yield tuple(title for _, title in path), body
                body = []
            if block.kind == "reset":
                path = []
                continue
            if block.level == 0:  # a part's own heading path: kept under the part's Markdown headings
                path.append((0, block.text))
                continue
            path = [(level, title) for level, title in path if level < block.level]
            path.append((block.level, block.text))
        else:
            body.append(block)
    if body:
        yield tuple(title for _, title in path), body


def chunk_markdown(markdown: str, *, max_tokens: int = DEFAULT_MAX_TOKENS) -> list[Chunk]:
    """Chunks of a Markdown document in order, each within max_tokens; blank input gives []."""
    return chunk_parts((DocumentPart(markdown),), max_tokens=max_tokens)


def chunk_parts(parts: Sequence[DocumentPart], *, max_tokens: int = DEFAULT_MAX_TOKENS) -> list[Chunk]:
    """Chunks of a document read as parts (pages, slides, rows), each within max_tokens, in order.

    Headings carry across parts (see DocumentPart). A chunk never holds text of two pages, slides or
    sheets; consecutive rows of a sheet pack together, the chunk's location spanning their rows.
    """
    if max_tokens < 1:
        raise ValueError("max_tokens must be at least 1")
    chunks: list[Chunk] = []
    for heading_path, blocks in _sections(parts):
        article = ""  # the article the section's text so far ends inside
        for run in _places(blocks, parts):
            for piece in _section_pieces(run, max_tokens):
                text = piece.text.strip()
                if text:
                    location = parts[piece.first].location
                    if piece.last != piece.first:
                        location = location.through(parts[piece.last].location)
                    if article and not _ARTICLE.match(text):
                        location = replace(location, within=article)
                    chunks.append(Chunk(text, heading_path, len(chunks), count_tokens(text), location))
                    article = _last_article(text) or article
    return chunks


def _last_article(text: str) -> str:
    """The number of the last article opening a line of text (第八十一条), "" when none does."""
    found = _ARTICLE_LINE.findall(text)
    return found[-1] if found else ""


def body_text(markdown: str) -> str:
    """The text of a document that can become chunks: without front matter, HTML comments, invisible
    characters and surrounding whitespace ("" for an empty or front-matter-only file)."""
    text = FRONT_MATTER.sub("", markdown.lstrip("\ufeff"), count=1)
    return _INVISIBLE.sub("", _COMMENT.sub("", text)).strip()


def embedding_trail(chunk: Chunk, *, document_title: str) -> str:
    """The line embedding_text puts before a chunk's text: title, heading path and the article the chunk
    continues ('' when none)."""
    trail: list[str] = []
    for title in (document_title.strip(), *chunk.heading_path, chunk.location.within):
        if title and (not trail or title != trail[-1]) and title not in trail:
            trail.append(title)
    return " > ".join(trail)


def embedding_text(chunk: Chunk, *, document_title: str) -> str:
    """What to embed and index for a chunk: document title, heading path, then the chunk text."""
    trail = embedding_trail(chunk, document_title=document_title)
    return trail + "\n" + chunk.text if trail else chunk.text
