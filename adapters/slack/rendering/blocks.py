"""Block Kit primitives, Slack's size limits, and text splitting that respects them (pure).

Blocks are built with slack_sdk's typed models (slack_sdk.models.blocks), which validate Slack's limits when
serialised; the limits below come from those models where they have them. Messages keep blocks as plain
dicts (what the Web API takes), so every builder here returns `Model(...).to_dict()`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    ButtonElement,
    ContextActionsBlock,
    ContextBlock,
    DividerBlock,
    FeedbackButtonObject,
    FeedbackButtonsElement,
    HeaderBlock,
    MarkdownBlock,
    MarkdownTextObject,
    PlainTextObject,
    SectionBlock,
)
from slack_sdk.models.views import View

Block = dict[str, Any]

SECTION_TEXT_MAX = SectionBlock.text_max_length  # 3000
MARKDOWN_TEXT_MAX = MarkdownBlock.text_max_length  # 12,000 (the markdown block, a streamed chunk)
MODAL_BLOCKS_MAX = View.blocks_max_length  # 100, for modals and the Home tab alike
VIEW_TITLE_MAX = View.title_max_length  # 24
BUTTON_TEXT_MAX = ButtonElement.text_max_length  # 75
BUTTON_VALUE_MAX = ButtonElement.value_max_length  # 2000
HEADER_TEXT_MAX = HeaderBlock.text_max_length  # 150
CONTEXT_ELEMENTS_MAX = ContextBlock.elements_max_length  # 10
BLOCK_ID_MAX = ActionsBlock.block_id_max_length  # 255
# Not in slack_sdk's models: Slack's documented 50 blocks per message, a context text element's 2,000
# characters, and the undocumented but measured (~13,200) total text across one message's blocks.
MESSAGE_BLOCKS_MAX = 50
CONTEXT_TEXT_MAX = 2000
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


def section(text: str, *, expand: bool | None = None) -> Block:
    """A mrkdwn section (expand: shown in full, without "see more", in AI-app surfaces)."""
    return SectionBlock(text=MarkdownTextObject(text=clip(text, SECTION_TEXT_MAX)), expand=expand).to_dict()


def markdown(text: str) -> Block:
    """A markdown block: standard Markdown, up to 12,000 characters."""
    return MarkdownBlock(text=clip(text, MARKDOWN_TEXT_MAX) or " ").to_dict()


def context(text: str) -> Block:
    return ContextBlock(elements=[MarkdownTextObject(text=clip(text, CONTEXT_TEXT_MAX))]).to_dict()


def header(text: str) -> Block:
    return HeaderBlock(text=PlainTextObject(text=clip(text, HEADER_TEXT_MAX))).to_dict()


def divider() -> Block:
    return DividerBlock().to_dict()


def button(text: str, *, action_id: str, value: str, style: str | None = None) -> dict[str, Any]:
    return ButtonElement(
        text=PlainTextObject(text=clip(text, BUTTON_TEXT_MAX), emoji=True),
        action_id=action_id[:BLOCK_ID_MAX],
        value=value[:BUTTON_VALUE_MAX],
        style=style,
    ).to_dict()


def actions(*elements: dict[str, Any], block_id: str | None = None) -> Block:
    return ActionsBlock(
        elements=list(elements), block_id=block_id[:BLOCK_ID_MAX] if block_id else None
    ).to_dict()


def feedback_buttons(
    *,
    action_id: str,
    positive: tuple[str, str, str],
    negative: tuple[str, str, str],
    block_id: str | None = None,
) -> Block:
    """Slack's own 👍/👎 element in a context_actions block; each button is (text, value, accessibility label)."""

    def one(spec: tuple[str, str, str]) -> FeedbackButtonObject:
        text, value, label = spec
        return FeedbackButtonObject(
            text=clip(text, FeedbackButtonObject.text_max_length),
            value=value[: FeedbackButtonObject.value_max_length],
            accessibility_label=clip(label, BUTTON_TEXT_MAX) if label else None,
        )

    element = FeedbackButtonsElement(
        action_id=action_id, positive_button=one(positive), negative_button=one(negative)
    )
    return ContextActionsBlock(
        elements=[element], block_id=block_id[:BLOCK_ID_MAX] if block_id else None
    ).to_dict()


def block_chars(block: Block) -> int:
    """Characters of visible text in a block (what Slack counts toward a message's size)."""
    total = 0
    value = block.get("text")
    if isinstance(value, dict):
        total += len(str(value.get("text", "")))
    elif isinstance(value, str):  # a markdown block
        total += len(value)
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
