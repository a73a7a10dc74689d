"""Model-written Markdown made safe for Slack's Markdown surfaces (streamed markdown_text, markdown blocks),
including while it streams in pieces (pure).

Slack renders standard Markdown there, but still parses its own `<…>` markup: `<!channel>` pings,
`<@U…>` mentions, `<url|label>` links. So, as the mrkdwn renderer does (adapters.slack.rendering.mrkdwn):
- a labelled link `[label](url)` (and an image `![alt](url)`) becomes `label (url)`: the destination is
  always visible;
- every `<` is followed by a zero-width space, so `<!here>`, `<@U1>` or `<url|label>` shows as text and
  is never acted on (escaping it as `&lt;` is not safe here: Markdown surfaces may show the
  entity literally). Links inside code spans are rewritten too: a rare cosmetic cost, never a hidden link.

StreamingMarkdown applies this to text that arrives in pieces: it holds back only the tail that could
still become a link (an unclosed `[`, a `](` without its `)`, a trailing `!`), so what it releases never
has to change later.
"""

from __future__ import annotations

import re

_LINK = re.compile(
    r"!?\[([^\[\]\n]*)\]\(\s*<?([^()\s<>]+(?:\([^()\s]*\))?[^()\s<>]*)>?(?:\s+\"[^\"]*\")?\s*\)"
)
ZERO_WIDTH_SPACE = "\u200b"
HOLD_MAX = 400  # a `[` further back than this is a stray bracket, not a link still arriving


def _shown_link(match: re.Match[str]) -> str:
    label, url = match.group(1).strip(), match.group(2)
    return url if not label or label == url else f"{label} ({url})"


def safe_markdown(text: str) -> str:
    """text with every link's destination shown and Slack's `<…>` markup neutralised."""
    return _LINK.sub(_shown_link, text).replace("<", "<" + ZERO_WIDTH_SPACE)


def _hold_from(text: str) -> int:
    """Where the tail that may still change begins (len(text) when nothing needs holding back)."""
    end = len(text) - 1 if text.endswith("!") else len(text)  # "!" may start an image
    opening = text.rfind("[", 0, end)
    if opening < 0 or end - opening > HOLD_MAX or "\n" in text[opening:end]:
        return end
    hold = opening - 1 if opening > 0 and text[opening - 1] == "!" else opening
    tail = text[opening:end]
    close = tail.find("]")
    if close < 0:
        return hold  # the label is still arriving
    after = tail[close + 1 :]
    if not after or (after.startswith("(") and ")" not in after):
        return hold  # "[1]" could still be followed by "(", or the URL is still arriving
    return end  # a citation like [1], or a complete link the regex takes whole


class StreamingMarkdown:
    """Safe Markdown for text arriving in pieces: feed() returns what can be shown now, finish() the rest."""

    def __init__(self) -> None:
        self.raw = ""  # everything fed so far, as the model wrote it
        self._released = 0  # how much of raw has been made safe and returned

    def feed(self, piece: str) -> str:
        """The newly showable safe text after adding piece (may be empty while a link is still arriving)."""
        self.raw += piece
        cut = max(self._released, _hold_from(self.raw))
        return self._release(cut)

    def finish(self) -> str:
        """Whatever is still held back, made safe."""
        return self._release(len(self.raw))

    def _release(self, cut: int) -> str:
        if cut <= self._released:
            return ""
        released = safe_markdown(self.raw[self._released : cut])
        self._released = cut
        return released

    @property
    def held(self) -> str:
        """The raw text not yet released."""
        return self.raw[self._released :]
