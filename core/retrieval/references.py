"""References one paragraph makes to another: an article it cites, a document it names (pure).

Statutes and handbooks send their reader elsewhere: "依照《中华人民共和国行政诉讼法》第四十五条" (another
document's article), "依照刑法第一百三十三条" (another law's article, by its bare name),
"依照本法第二十四条第二款" / "本条例第十条" (an article of the same document),
"依照《中华人民共和国行政诉讼法》的规定" (another document, no article), a Markdown link "[差旅政策](travel.md)",
"see the travel policy". These are read here from a paragraph's text; the knowledge base resolves them to
paragraphs (docs/design.md#following-references). A reference to a paragraph's own article ("前款", "本条")
names nothing new and is not read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import cn2an

from core.retrieval.versions import version_of
from core.text import NUMERAL

SELF = ""  # the title of a reference to the citing paragraph's own document
MAX_REFERENCES = 6  # per paragraph: a long list of citations is a table of contents, not a hop

_ARTICLE = rf"第([{NUMERAL}]+)条"
_TITLED = re.compile(rf"《([^《》\n]{{2,60}})》(?:\s*(?:的)?\s*{_ARTICLE})?")
_OWN = re.compile(
    rf"(?:本法|本条例|本规定|本办法|本细则|本解释|本决定|本规则|本章程|本守则|本制度){_ARTICLE}"
)
# a law cited by its bare name, without book-title marks: "依照刑法第一百三十三条", "依照行政诉讼法第四十五条"
_BARE = re.compile(
    rf"(?:依照|按照|根据|依据|适用|违反)(?:中华人民共和国)?"
    rf"(?!本)([\u4e00-\u9fff]{{1,15}}?(?:法典|法|条例|规定|办法|细则)){_ARTICLE}"
)
_MARKDOWN_LINK = re.compile(r"(?<!!)\[([^\[\]\n]{2,80})\]\(([^()\s]+)\)")
_ALSO_OWN = re.compile(rf"(?:、|和|及|或者|至)\s*{_ARTICLE}")
_OPENING = re.compile(rf"\s*{_ARTICLE}")
_EXTENSION = re.compile(r"\.(?:md|markdown|txt|html?|pdf|docx?|pptx?|xlsx?)$", re.IGNORECASE)
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Reference:
    """What a paragraph points at: a document by title (SELF: its own document) and maybe one article."""

    title: str
    article: int | None = None
    target: str = ""  # a link's target as written (a path or URL), when the reference is a link


def article_number(numeral: str) -> int | None:
    """第二十四条 → 24; None for something that is no number."""
    if numeral.isdigit():
        return int(numeral)
    try:
        value = cn2an.cn2an(numeral, "smart")
    except (ValueError, KeyError, IndexError):
        return None
    return int(value) if value and value == int(value) else None


def references_in(text: str) -> list[Reference]:
    """The references of a paragraph, in order, without repeats (at most MAX_REFERENCES)."""
    found: list[Reference] = []
    for match in _TITLED.finditer(text):
        title = " ".join(match.group(1).split())
        article = article_number(match.group(2)) if match.group(2) else None
        found.append(Reference(title, article))
        found.extend(_listed_after(text, match.end(), title))
    for match in _BARE.finditer(text):
        number = article_number(match.group(2))
        if number is not None:
            found.append(Reference(match.group(1), number))
            found.extend(_listed_after(text, match.end(), match.group(1)))
    for match in _OWN.finditer(text):
        number = article_number(match.group(1))
        if number is not None:
            found.append(Reference(SELF, number))
            found.extend(_listed_after(text, match.end(), SELF))
    for match in _MARKDOWN_LINK.finditer(text):
        target = match.group(2)
        if target.startswith("#"):
            continue  # a link inside the same page
        found.append(Reference(" ".join(match.group(1).split()), None, target=target))
    unique = list(dict.fromkeys(found))
    return unique[:MAX_REFERENCES]


def _listed_after(text: str, end: int, title: str) -> list[Reference]:
    """Further articles listed right after a citation: "第四十九条、第五十一条" (the same document's)."""
    more: list[Reference] = []
    position = end
    while (match := _ALSO_OWN.match(text, position)) is not None:
        number = article_number(match.group(1))
        if number is None:
            break
        more.append(Reference(title, number))
        position = match.end()
    return more


def opened_article(line: str) -> int | None:
    """The number of the article a line (or sentence) opens with, "第N条 …" (N in Chinese or digits); None
    for any other line."""
    match = _OPENING.match(line)
    return article_number(match.group(1)) if match is not None else None


def cites_article(text: str, article: int) -> bool:
    """Whether a paragraph holds the article itself: a line starting "第N条" (N in Chinese or digits)."""
    return any(opened_article(line) == article for line in text.splitlines())


def continues_article(within: str, article: int) -> bool:
    """Whether a chunk continues the article: ``within`` (core.models.Location.within) is that article."""
    return bool(within) and opened_article(within) == article


def normal_title(text: str) -> str:
    """A title for matching: brackets, extension and version date dropped, case and spaces folded."""
    text = _EXTENSION.sub("", text.strip().strip("《》「」\"'"))
    version = version_of(text)
    if version is not None:
        text = version.title
    return _SPACE.sub(" ", text).strip().lower()
