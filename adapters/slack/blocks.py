"""Block Kit primitives, Slack's size limits, and text splitting that respects them (pure)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Block = dict[str, Any]

SECTION_TEXT_MAX = 3000
MESSAGE_BLOCKS_MAX = 50
MODAL_BLOCKS_MAX = 100
BUTTON_TEXT_MAX = 75
HEADER_TEXT_MAX = 150
CONTEXT_TEXT_MAX = 2000
# Undocumented but measured (~13,200): total text across one message's blocks; stay well below it.
MESSAGE_BLOCK_CHARS_MAX = 12000
FALLBACK_TEXT_MAX = 300


@dataclass(frozen=True, slots=True)
class SlackMessage:
    """One chat message: notification fallback text plus its blocks."""

    text: str
    blocks: list[Block] = field(default_factory=list)


def clip(text: str, limit: int) -> str:
    """text shortened to at most limit characters, with an ellipsis when cut."""
    return text if len(text) <= limit else text[: max(0, limit - 1)].rstrip() + "…"


def section(text: str) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": clip(text, SECTION_TEXT_MAX)}}


def context(text: str) -> Block:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": clip(text, CONTEXT_TEXT_MAX)}]}


def header(text: str) -> Block:
    return {"type": "header", "text": {"type": "plain_text", "text": clip(text, HEADER_TEXT_MAX)}}


def divider() -> Block:
    return {"type": "divider"}


def button(text: str, *, action_id: str, value: str, style: str | None = None) -> dict[str, Any]:
    element: dict[str, Any] = {
        "type": "button",
        "text": {"type": "plain_text", "text": clip(text, BUTTON_TEXT_MAX), "emoji": True},
        "action_id": action_id,
        "value": value[:2000],
    }
    if style:
        element["style"] = style
    return element


def actions(*elements: dict[str, Any], block_id: str | None = None) -> Block:
    block: Block = {"type": "actions", "elements": list(elements)}
    if block_id:
        block["block_id"] = block_id[:255]
    return block


def block_chars(block: Block) -> int:
    """Characters of visible text in a block (what Slack counts toward a message's size)."""
    total = 0
    for key in ("text",):
        value = block.get(key)
        if isinstance(value, dict):
            total += len(str(value.get("text", "")))
    for element in block.get("elements", []) or []:
        if isinstance(element, dict):
            text = element.get("text")
            total += len(str(text.get("text", ""))) if isinstance(text, dict) else len(str(text or ""))
    return total


def _cut_point(text: str, limit: int) -> int:
    """Where to cut text (<= limit): a paragraph, a line, then a space; never inside a <link>."""
    window = text[:limit]
    for separator in ("\n\n", "\n", " "):
        position = window.rfind(separator)
        if position >= limit // 2:
            cut = position + len(separator)
            break
    else:
        cut = limit
    opening = text.rfind("<", 0, cut)
    if opening > text.rfind(">", 0, cut) and opening >= limit // 4:
        cut = opening  # the cut would split a <url|label>: cut before it
    return max(1, cut)


def split_text(text: str, limit: int = SECTION_TEXT_MAX) -> list[str]:
    """mrkdwn split into pieces of at most limit characters; a ``` block cut in two is closed and reopened."""
    pieces: list[str] = []
    rest = text.strip("\n")
    reopen = ""
    while rest:
        rest = reopen + rest
        if len(rest) <= limit:
            pieces.append(rest)
            break
        budget = limit - 4  # room for a closing "\n```"
        cut = _cut_point(rest, budget)
        piece, rest = rest[:cut].rstrip("\n"), rest[cut:].lstrip("\n")
        inside_code = piece.count("```") % 2 == 1
        pieces.append(piece + "\n```" if inside_code else piece)
        reopen = "```\n" if inside_code else ""
    return [piece for piece in pieces if piece.strip()]


def pack_messages(body: list[Block], footer: list[Block], *, fallback: str) -> list[SlackMessage]:
    """Blocks packed into messages of <= 50 blocks and <= 12,000 characters; the footer stays together, last."""
    messages: list[list[Block]] = [[]]
    for block in body:
        current = messages[-1]
        chars = sum(block_chars(b) for b in current) + block_chars(block)
        if current and (len(current) + 1 > MESSAGE_BLOCKS_MAX or chars > MESSAGE_BLOCK_CHARS_MAX):
            messages.append([])
        messages[-1].append(block)
    last = messages[-1]
    footer_chars = sum(block_chars(b) for b in footer)
    if last and (
        len(last) + len(footer) > MESSAGE_BLOCKS_MAX
        or sum(block_chars(b) for b in last) + footer_chars > MESSAGE_BLOCK_CHARS_MAX
    ):
        messages.append([])
    messages[-1].extend(footer)
    text = clip(fallback.strip(), FALLBACK_TEXT_MAX) or " "
    return [SlackMessage(text=text, blocks=blocks) for blocks in messages if blocks]
