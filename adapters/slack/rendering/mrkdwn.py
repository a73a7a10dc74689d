"""Markdown (as models write it) to Slack mrkdwn: bold, italics, links, lists, headings, code (pure).

Links from a model's text never hide where they go: a labelled link becomes "label (<url>)", the URL shown
as itself; only the answer's own source URLs (trusted_urls) may keep a label. Slack's control characters
are escaped everywhere else, so no text becomes a ping (<!channel>, <!here>, <@U…>, <!subteam^…>) or a
disguised link.
"""

from __future__ import annotations

import re
from collections.abc import Collection

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")
_QUOTE = re.compile(r"^\s{0,3}>\s?(.*)$")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_IMAGE_OR_LINK = re.compile(
    r"!?\[([^\]\n]*)\]\(\s*<?([^()\s<>]+(?:\([^()\s]*\))?[^()\s<>]*)>?(?:\s+\"[^\"]*\")?\s*\)"
)
_AUTOLINK = re.compile(r"<(https?://[^\s<>]+)>")
_BOLD = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_ITALIC_STAR = re.compile(r"(?<![*\w])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![*\w])")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")

BOLD_MARK = "\x01"
TOKEN = "\x02{}\x03"
_TOKEN_RE = re.compile("\x02(\\d+)\x03")


def escape(text: str) -> str:
    """Escape Slack's three control characters (and nothing else)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def link(url: str, label: str = "") -> str:
    """A mrkdwn link; `|` in the url is percent-encoded, the label is escaped."""
    target = url.replace("|", "%7C").replace(" ", "%20")
    label = escape(label.replace("|", "¦")).strip()
    return f"<{escape(target)}|{label}>" if label and label != url else f"<{escape(target)}>"


def shown_link(url: str, label: str, trusted_urls: Collection[str]) -> str:
    """A link whose destination is visible; label is mrkdwn already. Only a trusted URL keeps its label as
    the link text; any other labelled link becomes "label (<url>)"."""
    label = label.strip()
    if not label or label == escape(url):
        return link(url)
    if url in trusted_urls:
        target = url.replace("|", "%7C").replace(" ", "%20")
        return f"<{escape(target)}|{label.replace('|', '¦')}>"
    return f"{label} ({link(url)})"


def _inline(text: str, trusted_urls: Collection[str] = ()) -> str:
    """Convert one line of inline Markdown. Code spans and links are protected before emphasis."""
    protected: list[str] = []

    def keep(value: str) -> str:
        protected.append(value)
        return TOKEN.format(len(protected) - 1)

    def markdown_link(match: re.Match[str]) -> str:
        return keep(shown_link(match.group(2), _inline(match.group(1), trusted_urls), trusted_urls))

    text = _CODE_SPAN.sub(lambda m: keep(f"`{escape(m.group(2))}`"), text)
    text = _IMAGE_OR_LINK.sub(markdown_link, text)
    text = _AUTOLINK.sub(lambda m: keep(link(m.group(1))), text)
    text = escape(text)
    text = _BOLD.sub(lambda m: f"{BOLD_MARK}{m.group(2)}{BOLD_MARK}", text)
    text = _ITALIC_STAR.sub(lambda m: f"_{m.group(1)}_", text)
    text = _STRIKE.sub(lambda m: f"~{m.group(1)}~", text)
    text = text.replace(BOLD_MARK, "*")
    while _TOKEN_RE.search(text):
        text = _TOKEN_RE.sub(lambda m: protected[int(m.group(1))], text)
    return text


def _bold_line(text: str, trusted_urls: Collection[str]) -> str:
    inner = _inline(text, trusted_urls).strip()
    inner = inner.replace("*", "")  # nested bold inside a heading would close it early
    return f"*{inner}*" if inner else ""


def _line(line: str, trusted_urls: Collection[str]) -> str:
    if _RULE.match(line):
        return "───"
    heading = _HEADING.match(line)
    if heading:
        return _bold_line(heading.group(1), trusted_urls)
    bullet = _BULLET.match(line)
    if bullet:
        indent = " " * (len(bullet.group(1).expandtabs(4)) // 2 * 4)
        return f"{indent}• {_inline(bullet.group(2), trusted_urls)}"
    quote = _QUOTE.match(line)
    if quote:
        return f"> {_inline(quote.group(1), trusted_urls)}"
    return _inline(line, trusted_urls)


def to_mrkdwn(markdown: str, *, trusted_urls: Collection[str] = ()) -> str:
    """Slack mrkdwn for a Markdown text. Fenced code keeps its content (escaped), tables become code;
    links show their URL unless the URL is one of trusted_urls (the answer's own sources)."""
    out: list[str] = []
    lines = (markdown or "").replace("\r\n", "\n").split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        fence = _FENCE.match(line)
        if fence:
            body: list[str] = []
            index += 1
            while index < len(lines) and not lines[index].strip().startswith(fence.group(1)):
                body.append(escape(lines[index]))
                index += 1
            out.append("```\n" + "\n".join(body) + "\n```")
            index += 1
            continue
        if _TABLE_ROW.match(line):
            rows: list[str] = []
            while index < len(lines) and _TABLE_ROW.match(lines[index]):
                if not re.fullmatch(r"[\s|:\-]+", lines[index]):
                    rows.append(escape(lines[index].strip()))
                index += 1
            out.append("```\n" + "\n".join(rows) + "\n```")
            continue
        out.append(_line(line, trusted_urls))
        index += 1
    return "\n".join(out).strip("\n")
