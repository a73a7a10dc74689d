"""The model roles (rewrite, assess, summarise, vote, answer) over OpenAI-compatible chat models."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import re
from collections.abc import AsyncIterator, Sequence
from typing import Any

from core.answering.answer import answer_messages, fit_evidence, prompt_tokens
from core.answering.prompts import (
    ASSESS_SCHEMA,
    ASSESS_SYSTEM,
    REWRITE_SYSTEM,
    SUMMARY_SYSTEM_PROMPT_EN,
    SUMMARY_SYSTEM_PROMPT_ZH,
    VOTE_SYSTEM,
)
from core.budget import clip
from core.errors import ModelOutputInvalid
from core.messages import per_language
from core.models import AnswerRequest, Assessment, Completion, Hit, Message, Turn, Usage
from core.ports import ChatModel
from core.prompt_markup import LONGEST_ESCAPE, Markup, element, json_data, prompt, unescape_text
from core.text import detect_language
from core.trace import StopReason, stop_reason_label

log = logging.getLogger(__name__)

REWRITE_MAX_TOKENS = 512
# Room kept for the answer when a small context window forces the evidence to shrink.
ANSWER_RESERVE_TOKENS = 1024
ASSESS_MAX_TOKENS = 900
# Paragraph lengths tried, longest first, when the assessment must fit a small context window; and the
# room the JSON schema takes when the server cannot take it as a response format (it goes in the prompt).
ASSESS_CLIPS = (600, 300, 150)
SCHEMA_HINT_TOKENS = 200
VOTE_MAX_TOKENS = 4
HISTORY_ANSWER_CHARS = 200


def format_history(history: Sequence[Turn]) -> Markup:
    """History as <turn><user>…</user><assistant>…</assistant></turn> elements, escaped so that no turn can
    end the history or forge another turn; answers cut to 200 characters to keep the call light
    (docs/design.md#follow-up-rewrite)."""
    lines = ["<history>"]
    for turn in history:
        answer = (
            turn.answer
            if len(turn.answer) <= HISTORY_ANSWER_CHARS
            else turn.answer[:HISTORY_ANSWER_CHARS] + "…"
        )
        lines.append(f"<turn>{element('user', turn.question).text}{element('assistant', answer).text}</turn>")
    lines.append("</history>")
    return Markup("\n".join(lines))


_LABEL = re.compile(
    r"^\s*(?:最后的问题|改写后的问题|改写|last question|rewritten question|rewrite)\s*(?:/\s*[\w ]+)?[:：]\s*",
    re.I,
)
_QUESTION_ELEMENT = re.compile(r"<question>(.*?)</question>", re.S)
_TAG = re.compile(r"</?[a-z_]+[^<>]*>")


def clean_rewrite(text: str) -> str:
    """The rewritten question alone: small models echo the prompt's label and <question> element (seen on
    Qwen2.5 0.5B: '最后的问题 / last question: <question>…</question>'); tags are dropped, escapes read."""
    inside = _QUESTION_ELEMENT.findall(text)
    body = inside[-1] if inside else text
    body = unescape_text(_TAG.sub(" ", body))
    lines = [line.strip() for line in body.splitlines() if line.strip()]
    first = _LABEL.sub("", lines[0]) if lines else ""
    return " ".join(first.split()).strip('"“”「」').strip()


def parse_assessment(text: str) -> Assessment:
    """Validate the assessor's strict JSON {sufficient, missing, queries}; anything else is invalid."""
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ModelOutputInvalid(f"assessment is not JSON: {text[:200]!r}") from exc
    if not isinstance(data, dict) or not isinstance(data.get("sufficient"), bool):
        raise ModelOutputInvalid(f"assessment has no boolean 'sufficient': {text[:200]!r}")
    missing = data.get("missing", "")
    queries = data.get("queries", [])
    if not isinstance(missing, str) or not isinstance(queries, list):
        raise ModelOutputInvalid(f"assessment fields have the wrong types: {text[:200]!r}")
    cleaned = tuple(q.strip() for q in queries if isinstance(q, str) and not _placeholder(q))
    return Assessment(
        sufficient=data["sufficient"],
        missing="" if _placeholder(missing) else missing.strip(),
        queries=cleaned,
    )


def _placeholder(text: str) -> bool:
    """Whether a field is empty or only a template's ellipsis (a small model copies the literal "...")."""
    return not text.strip(" \t\n.。…-_\"'“”")


def parse_vote(text: str) -> bool:
    """yes/no (or 是/否) from the complexity vote."""
    answer = text.strip().strip(".。!！").lower()
    if answer in {"yes", "y", "是", "需要", "true"}:
        return True
    if answer in {"no", "n", "否", "不需要", "false"}:
        return False
    raise ModelOutputInvalid(f"vote is neither yes nor no: {text[:50]!r}")


def _evidence_for_assessment(evidence: Sequence[Hit], chars: int = 600) -> list[dict[str, str]]:
    return [
        {
            "n": str(i),
            "document": hit.document_name,
            "heading": hit.heading,
            "content": clip(hit.content, chars),
        }
        for i, hit in enumerate(evidence, start=1)
    ]


def assessment_messages(
    question: str, evidence: Sequence[Hit], searched: Sequence[str], *, chars: int = ASSESS_CLIPS[0]
) -> list[Message]:
    """The assessor's messages: rules, then the question, evidence (each clipped to chars) and past queries."""
    payload = {
        "question": question,
        "evidence": _evidence_for_assessment(evidence, chars),
        "already_searched": list(searched),
    }
    return prompt(Markup(ASSESS_SYSTEM), json_data(payload))


def fit_assessment(
    question: str, evidence: Sequence[Hit], searched: Sequence[str], *, window: int | None, reply_tokens: int
) -> list[Message]:
    """assessment_messages that fit the window beside the reply and the schema hint: paragraphs clipped
    shorter first (600, 300, 150 characters), then the lowest-ranked left out (one always stays).
    CPU-bound (tiktoken)."""
    messages = assessment_messages(question, evidence, searched)
    if window is None:
        return messages
    room = window - reply_tokens - SCHEMA_HINT_TOKENS
    for chars in ASSESS_CLIPS:
        messages = assessment_messages(question, evidence, searched, chars=chars)
        if prompt_tokens(messages) <= room:
            return messages
    kept = list(evidence)
    while len(kept) > 1:
        kept.pop()
        messages = assessment_messages(question, kept, searched, chars=ASSESS_CLIPS[-1])
        if prompt_tokens(messages) <= room:
            break
    return messages


class LlmEngine:
    """Engine over a chat model (answers) and an auxiliary model (rewrite, assess, summary, vote)."""

    def __init__(self, *, chat: ChatModel, aux: ChatModel, answer_max_tokens: int = 1500) -> None:
        self._chat = chat
        self._aux = aux
        self._answer_max_tokens = answer_max_tokens

    @property
    def name(self) -> str:
        return f"model:{self._chat.name}"

    async def rewrite(self, history: Sequence[Turn], question: str) -> tuple[str, Usage]:
        messages = prompt(
            Markup(REWRITE_SYSTEM),
            Markup("历史 / history:\n"),
            format_history(history),
            Markup("\n\n最后的问题 / last question: "),
            element("question", question),
        )
        completion = await self._aux.complete(messages, max_tokens=REWRITE_MAX_TOKENS)
        rewritten = clean_rewrite(completion.text)
        if not rewritten:
            raise ModelOutputInvalid(f"the rewrite holds no question: {completion.text[:200]!r}")
        return rewritten, completion.usage

    async def assess(
        self, question: str, evidence: Sequence[Hit], searched: Sequence[str]
    ) -> tuple[Assessment, Usage]:
        window = await self._aux.context_window()
        messages = await asyncio.to_thread(
            fit_assessment, question, evidence, searched, window=window, reply_tokens=ASSESS_MAX_TOKENS
        )
        completion = await self._aux.complete(
            messages,
            max_tokens=ASSESS_MAX_TOKENS,
            json_schema=ASSESS_SCHEMA,
        )
        return parse_assessment(completion.text), completion.usage

    async def summarise(self, previous: str, turns: Sequence[Turn], *, max_tokens: int) -> tuple[str, Usage]:
        lang = detect_language(" ".join(t.question for t in turns))
        system = per_language(lang, zh=SUMMARY_SYSTEM_PROMPT_ZH, en=SUMMARY_SYSTEM_PROMPT_EN)
        records = [{"question": t.question, "answer": t.answer} for t in turns]
        messages = prompt(
            Markup(system),
            Markup("已有摘要 / previous summary:\n"),
            element("previous_summary", previous, block=True),
            Markup("\n\n待合并的问答 / turns to merge:\n<turns>\n"),
            json_data(records),
            Markup("\n</turns>"),
        )
        completion = await self._aux.complete(messages, max_tokens=max_tokens)
        text = completion.text.strip()
        if not text:
            raise ModelOutputInvalid("empty summary")
        return text, completion.usage

    async def vote_multihop(self, question: str) -> tuple[bool, Usage]:
        completion = await self._aux.complete(
            prompt(Markup(VOTE_SYSTEM), question), max_tokens=VOTE_MAX_TOKENS
        )
        return parse_vote(completion.text), completion.usage

    async def answer(self, request: AnswerRequest) -> AsyncIterator[str | Completion]:
        try:
            label = stop_reason_label(StopReason(request.stop_reason), request.lang)
        except ValueError:
            label = request.stop_reason or "-"
        window = await self._chat.context_window()
        reply = min(self._answer_max_tokens, ANSWER_RESERVE_TOKENS)
        fitted = await asyncio.to_thread(
            fit_evidence, request, stop_label=label, window=window, reply_tokens=reply
        )
        if len(fitted.evidence) < len(request.evidence):
            log.info(
                "answer: %d of %d paragraphs fit the %s-token context window",
                len(fitted.evidence),
                len(request.evidence),
                window,
            )
        messages = answer_messages(fitted, stop_label=label)
        reader = EscapeReader()
        async for item in self._chat.stream(messages, max_tokens=self._answer_max_tokens):
            if isinstance(item, Completion):
                tail = reader.flush()
                if tail:
                    yield tail
                yield dataclasses.replace(item, text=unescape_text(item.text))
            elif visible := reader.feed(item):
                yield visible


class EscapeReader:
    """unescape_text over streamed deltas: a trailing "&" that may begin an escape waits for the next delta."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, delta: str) -> str:
        text = self._held + delta
        amp = text.rfind("&")
        if amp != -1 and len(text) - amp < LONGEST_ESCAPE and ";" not in text[amp:]:
            text, self._held = text[:amp], text[amp:]
        else:
            self._held = ""
        return unescape_text(text)

    def flush(self) -> str:
        held, self._held = self._held, ""
        return unescape_text(held)
