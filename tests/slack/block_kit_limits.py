"""Slack's payload limits, checked on every message and view the mock Web API receives."""

from __future__ import annotations

from typing import Any

SECTION_TEXT = 3000
SECTION_FIELD = 2000
MESSAGE_BLOCKS = 50
MODAL_BLOCKS = 100
BUTTON_TEXT = 75
BUTTON_VALUE = 2000
HEADER_TEXT = 150
MESSAGE_TEXT = 40000
MESSAGE_BLOCK_CHARS = 13200  # measured msg_blocks_too_long threshold (undocumented)
CONTEXT_ELEMENTS = 10
CONTEXT_ACTIONS_ELEMENTS = 5
MARKDOWN_TEXT = 12000
HOME_BLOCKS = 100
ACTIONS_ELEMENTS = 25
ID_MAX = 255
MODAL_TITLE = 24
PRIVATE_METADATA = 3000


def _text(obj: Any) -> str:
    return str(obj.get("text", "")) if isinstance(obj, dict) else ""


def _check_text_object(obj: Any, where: str, limit: int, problems: list[str]) -> None:
    if not isinstance(obj, dict) or obj.get("type") not in ("mrkdwn", "plain_text"):
        problems.append(f"{where}: not a text object: {obj!r:.80}")
        return
    text = _text(obj)
    if not text.strip():
        problems.append(f"{where}: empty text")
    if len(text) > limit:
        problems.append(f"{where}: text of {len(text)} characters > {limit}")


def _check_element(element: dict[str, Any], where: str, problems: list[str]) -> None:
    if element.get("type") == "button":
        text = element.get("text")
        _check_text_object(text, f"{where} button", BUTTON_TEXT, problems)
        if isinstance(text, dict) and text.get("type") != "plain_text":
            problems.append(f"{where}: button text must be plain_text")
        if len(str(element.get("value", ""))) > BUTTON_VALUE:
            problems.append(f"{where}: button value too long")
        if not element.get("action_id") or len(str(element["action_id"])) > ID_MAX:
            problems.append(f"{where}: bad action_id")


def _check_context_action(element: dict[str, Any], where: str, problems: list[str]) -> None:
    """A context_actions element: feedback_buttons (two plain_text buttons with values) or icon_button."""
    kind = element.get("type")
    if not element.get("action_id") or len(str(element["action_id"])) > ID_MAX:
        problems.append(f"{where}: bad action_id")
    if kind == "feedback_buttons":
        for name in ("positive_button", "negative_button"):
            button = element.get(name)
            if not isinstance(button, dict):
                problems.append(f"{where}: feedback_buttons without {name}")
                continue
            _check_text_object(button.get("text"), f"{where} {name}", BUTTON_TEXT, problems)
            if not button.get("value") or len(str(button["value"])) > BUTTON_VALUE:
                problems.append(f"{where}: {name} needs a value of at most {BUTTON_VALUE} characters")
            if len(str(button.get("accessibility_label", ""))) > BUTTON_TEXT:
                problems.append(f"{where}: {name} accessibility_label too long")
    elif kind == "icon_button":
        _check_text_object(element.get("text"), f"{where} icon_button", BUTTON_TEXT, problems)
        if not element.get("icon"):
            problems.append(f"{where}: icon_button without an icon")
    else:
        problems.append(f"{where}: {kind!r} is not allowed in context_actions")


def check_blocks(blocks: Any, *, max_blocks: int, where: str) -> list[str]:
    """Problems with a list of blocks (empty when valid)."""
    problems: list[str] = []
    if not isinstance(blocks, list):
        return [f"{where}: blocks is not a list"]
    if len(blocks) > max_blocks:
        problems.append(f"{where}: {len(blocks)} blocks > {max_blocks}")
    action_ids: set[str] = set()
    for index, block in enumerate(blocks):
        at = f"{where}[{index}] {block.get('type')}"
        if len(str(block.get("block_id", ""))) > ID_MAX:
            problems.append(f"{at}: block_id too long")
        kind = block.get("type")
        if kind == "section":
            if "text" in block:
                _check_text_object(block["text"], at, SECTION_TEXT, problems)
            fields = block.get("fields") or []
            if len(fields) > 10:
                problems.append(f"{at}: more than 10 fields")
            for field in fields:
                _check_text_object(field, f"{at} field", SECTION_FIELD, problems)
            if "text" not in block and not fields:
                problems.append(f"{at}: section without text or fields")
        elif kind == "header":
            _check_text_object(block.get("text"), at, HEADER_TEXT, problems)
            if _text(block.get("text")) and block["text"].get("type") != "plain_text":
                problems.append(f"{at}: header text must be plain_text")
        elif kind == "context":
            elements = block.get("elements") or []
            if not elements or len(elements) > CONTEXT_ELEMENTS:
                problems.append(f"{at}: {len(elements)} context elements")
            for element in elements:
                if element.get("type") in ("mrkdwn", "plain_text"):
                    _check_text_object(element, f"{at} element", SECTION_TEXT, problems)
        elif kind == "actions":
            elements = block.get("elements") or []
            if not elements or len(elements) > ACTIONS_ELEMENTS:
                problems.append(f"{at}: {len(elements)} action elements")
            for element in elements:
                _check_element(element, at, problems)
                action_id = str(element.get("action_id"))
                if action_id in action_ids:
                    problems.append(f"{at}: duplicate action_id {action_id}")
                action_ids.add(action_id)
        elif kind == "context_actions":
            elements = block.get("elements") or []
            if not elements or len(elements) > CONTEXT_ACTIONS_ELEMENTS:
                problems.append(f"{at}: {len(elements)} context_actions elements")
            for element in elements:
                _check_context_action(element, at, problems)
                action_id = str(element.get("action_id"))
                if action_id in action_ids:
                    problems.append(f"{at}: duplicate action_id {action_id}")
                action_ids.add(action_id)
        elif kind == "markdown":
            text = block.get("text")
            if not isinstance(text, str) or not text.strip():
                problems.append(f"{at}: a markdown block needs text")
            elif len(text) > MARKDOWN_TEXT:
                problems.append(f"{at}: markdown text of {len(text)} characters > {MARKDOWN_TEXT}")
        elif kind not in ("divider", "image", "rich_text", "input"):
            problems.append(f"{at}: unknown block type")
    return problems


def _block_chars(blocks: list[dict[str, Any]]) -> int:
    total = 0
    for block in blocks:
        text = block.get("text")
        total += len(text) if isinstance(text, str) else len(_text(text))
        for element in block.get("elements") or []:
            total += len(_text(element)) + len(
                _text(element.get("text")) if isinstance(element, dict) else ""
            )
    return total


def check_message(params: dict[str, Any], *, method: str) -> list[str]:
    """Problems with a chat.postMessage / chat.update / chat.postEphemeral / response_url payload."""
    problems: list[str] = []
    text = params.get("text")
    blocks = params.get("blocks")
    if text is not None and len(str(text)) > MESSAGE_TEXT:
        problems.append(f"{method}: text of {len(str(text))} characters > {MESSAGE_TEXT}")
    if blocks is None:
        if not text:
            problems.append(f"{method}: neither text nor blocks")
        return problems
    problems += check_blocks(blocks, max_blocks=MESSAGE_BLOCKS, where=method)
    if isinstance(blocks, list) and _block_chars(blocks) > MESSAGE_BLOCK_CHARS:
        problems.append(f"{method}: {_block_chars(blocks)} characters of block text (msg_blocks_too_long)")
    return problems


def check_view(view: Any, *, method: str) -> list[str]:
    """Problems with a modal view payload."""
    if not isinstance(view, dict):
        return [f"{method}: view is not an object"]
    problems = check_blocks(view.get("blocks"), max_blocks=MODAL_BLOCKS, where=method)
    if view.get("type") != "modal":
        problems.append(f"{method}: view type {view.get('type')!r}")
    for key in ("title", "close", "submit"):
        if key in view:
            _check_text_object(view[key], f"{method} {key}", MODAL_TITLE, problems)
    title = view.get("title")
    if not isinstance(title, dict) or title.get("type") != "plain_text":
        problems.append(f"{method}: a modal needs a plain_text title")
    if len(str(view.get("private_metadata", ""))) > PRIVATE_METADATA:
        problems.append(f"{method}: private_metadata too long")
    if len(str(view.get("callback_id", ""))) > ID_MAX:
        problems.append(f"{method}: callback_id too long")
    return problems


def check_home_view(view: Any, *, method: str = "views.publish") -> list[str]:
    """Problems with an App Home tab view: type home, 1..100 valid blocks, bounded metadata."""
    if not isinstance(view, dict):
        return [f"{method}: view is not an object"]
    blocks = view.get("blocks")
    problems = check_blocks(blocks, max_blocks=HOME_BLOCKS, where=method)
    if not blocks:
        problems.append(f"{method}: a Home tab needs at least one block")
    if view.get("type") != "home":
        problems.append(f"{method}: view type {view.get('type')!r}")
    if len(str(view.get("private_metadata", ""))) > PRIVATE_METADATA:
        problems.append(f"{method}: private_metadata too long")
    if len(str(view.get("callback_id", ""))) > ID_MAX:
        problems.append(f"{method}: callback_id too long")
    return problems


TASK_STATUSES = {"pending", "in_progress", "complete", "error"}
STOP_STREAM_BLOCKS = 50


def check_stream_call(params: dict[str, Any], *, method: str) -> list[str]:
    """Problems with a chat.startStream / appendStream / stopStream call: markdown_text of at most 12,000
    characters per call, known chunk types, task updates with an id, a title and a known status, and at
    most 50 valid blocks on stopStream."""
    problems: list[str] = []
    text = str(params.get("markdown_text") or "")
    chunks = params.get("chunks") or []
    if not isinstance(chunks, list):
        return [f"{method}: chunks is not a list"]
    for index, chunk in enumerate(chunks):
        at = f"{method} chunks[{index}]"
        kind = chunk.get("type") if isinstance(chunk, dict) else None
        if kind == "markdown_text":
            text += str(chunk.get("text") or "")
        elif kind == "task_update":
            if not chunk.get("id") or not str(chunk.get("title") or "").strip():
                problems.append(f"{at}: a task update needs an id and a title")
            if chunk.get("status") not in TASK_STATUSES:
                problems.append(f"{at}: task status {chunk.get('status')!r}")
        elif kind == "plan_update":
            if not chunk.get("title"):
                problems.append(f"{at}: a plan update needs a title")
        elif kind == "blocks":
            problems += check_blocks(chunk.get("blocks"), max_blocks=STOP_STREAM_BLOCKS, where=at)
        else:
            problems.append(f"{at}: unknown chunk type {kind!r}")
    if len(text) > MARKDOWN_TEXT:
        problems.append(f"{method}: {len(text)} characters of markdown in one call > {MARKDOWN_TEXT}")
    if method == "chat.stopStream" and params.get("blocks") is not None:
        problems += check_blocks(params["blocks"], max_blocks=STOP_STREAM_BLOCKS, where=method)
    return problems


METADATA_METHODS = {"chat.postMessage", "chat.update", "chat.stopStream", "chat.scheduleMessage"}


def check_metadata(params: dict[str, Any], *, method: str) -> list[str]:
    """Problems with message metadata: only methods whose reference lists `metadata` take it (not
    chat.startStream or chat.appendStream), as an object with a string event_type and an object
    event_payload."""
    metadata = params.get("metadata")
    if metadata is None:
        return []
    if method not in METADATA_METHODS:
        return [f"{method}: takes no metadata"]
    if not isinstance(metadata, dict):
        return [f"{method}: metadata is not an object"]
    problems = []
    if not isinstance(metadata.get("event_type"), str) or not metadata["event_type"]:
        problems.append(f"{method}: metadata needs an event_type")
    if not isinstance(metadata.get("event_payload"), dict):
        problems.append(f"{method}: metadata needs an event_payload object")
    return problems
