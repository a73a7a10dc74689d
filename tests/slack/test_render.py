"""Pure Block Kit rendering: splitting, packing, the final answer, the trace summary, progress, the modal.

Progress lines and the trace summary: docs/design.md#progress-lines-and-the-trace-summary.
"""

from __future__ import annotations

import json
from typing import Any

from adapters.slack.rendering.blocks import MESSAGE_BLOCK_CHARS_MAX, pack_messages, section, split_text
from adapters.slack.rendering.final_messages import answer_messages, split_notice
from adapters.slack.rendering.progress_line import ProgressView, placeholder_message
from adapters.slack.surfaces.trace_modal import trace_blocks, trace_modal
from core.answering.progress_text import progress_text
from core.answering.trace_summary import trace_summary
from core.events import (
    AnswerDelta,
    Assessed,
    Compacting,
    ContextLoading,
    Generating,
    Progress,
    Queued,
    Retrieving,
)
from core.models import RecordStatus
from core.record import Record, RecordDetails
from tests.slack.block_kit_limits import check_message, check_view


def _record(answer: str = "Answer [1].", **details: Any) -> Record:
    return Record(
        id=7,
        conversation_id="c",
        question="What?",
        status=RecordStatus.ANSWERED,
        answer=answer,
        details=RecordDetails.from_json({"lang": "en", **details}),
    )


def test_split_text_keeps_pieces_within_the_limit_and_loses_nothing() -> None:
    """Long text is cut at paragraph, line or word boundaries into pieces of at most the limit."""
    text = "\n\n".join(f"para {i} " + "word " * 200 for i in range(40))
    pieces = split_text(text, 3000)
    assert all(len(p) <= 3000 for p in pieces)
    assert " ".join(" ".join(pieces).split()) == " ".join(text.split())


def test_split_text_closes_and_reopens_a_code_block_it_cuts() -> None:
    """A ``` block cut across sections is closed at the end of one piece and reopened in the next."""
    text = "```\n" + "\n".join(f"line {i} of code" for i in range(400)) + "\n```"
    pieces = split_text(text, 1000)
    assert len(pieces) > 1
    assert all(p.count("```") % 2 == 0 for p in pieces)
    assert all(p.startswith("```") for p in pieces)


def test_split_text_does_not_cut_inside_a_link() -> None:
    """A cut that would fall inside <url|label> moves before the link."""
    text = "x" * 2950 + " <https://example.com/a/very/long/path|a long label here> tail"
    first, *_ = split_text(text, 3000)
    assert "<https" not in first


def test_pack_messages_respects_block_and_character_limits_and_keeps_the_footer_last() -> None:
    """120 blocks become several messages of <= 50 blocks; the footer is whole on the last message."""
    body = [section(f"block {i} " + "y" * 250) for i in range(120)]
    footer = [section("sources"), section("summary")]
    messages = pack_messages(body, footer, fallback="fallback")
    assert len(messages) >= 3
    for message in messages:
        assert len(message.blocks) <= 50
        assert sum(len(b["text"]["text"]) for b in message.blocks) <= MESSAGE_BLOCK_CHARS_MAX
    assert messages[-1].blocks[-2:] == footer


def test_the_trace_summary_line_uses_the_documented_wording() -> None:
    """Rounds, stop label and (when history is on) compaction statistics form the shared one-line summary."""
    details: dict[str, Any] = {
        "trace": {"rounds": [{}, {}, {}], "stop_reason": "no_new_evidence"},
        "context": {"compacted_rounds": 3, "recent_rounds": 1},
    }
    assert trace_summary(RecordDetails.from_json(details), "en") == "Retrieval: 3 rounds · no new evidence"
    details["context"]["enabled"] = True
    assert (
        trace_summary(RecordDetails.from_json(details), "zh")
        == "检索 3 轮 · 未发现新增资料 · 上下文: 已压缩 3 轮, 保留近期 1 轮原文"
    )


def test_split_notice_removes_the_notice_from_the_answer_body() -> None:
    """The notice appended to the answer text is taken out so it shows once, in its own block."""
    assert split_notice("Body [1].\n\nNot verified: X.", "Not verified: X.") == (
        "Body [1].",
        "Not verified: X.",
    )
    assert split_notice("Body.", None) == ("Body.", "")


def test_the_final_message_is_valid_block_kit_with_sources_summary_and_buttons() -> None:
    """The rendered answer passes the mock's limit checks and carries numbered, linked sources and actions."""
    record = _record(
        "Deploy with **make** [1][2].",
        citations=[
            {"n": 1, "document": "Ops <guide>", "heading": "Deploy", "source": "https://x.example/ops"},
            {"n": 2, "document": "Notes.md", "heading": "", "source": "docs/notes.md"},
            {"n": 2, "document": "Notes.md", "heading": "dup", "source": ""},
        ],
        trace={"rounds": [{}], "stop_reason": "sufficient"},
    )
    [message] = answer_messages(record)
    assert check_message({"text": message.text, "blocks": message.blocks}, method="chat.update") == []
    text = json.dumps(message.blocks, ensure_ascii=False)
    assert "[1] <https://x.example/ops|Ops &lt;guide&gt;> › Deploy" in text
    assert "[2] Notes.md" in text and "dup" not in text
    trace_button, feedback = message.blocks[-2:]
    assert [e["action_id"] for e in trace_button["elements"]] == ["kb_show_trace"]
    assert trace_button["elements"][0]["value"] == "7"
    [element] = feedback["elements"]
    assert (feedback["type"], element["type"], element["action_id"]) == (
        "context_actions",
        "feedback_buttons",
        "kb_feedback",
    )
    assert (element["positive_button"]["value"], element["negative_button"]["value"]) == ("up:7", "down:7")


def test_progress_texts_follow_the_design_for_each_phase() -> None:
    """Each phase event shows its documented localized status line, always marked in progress."""
    view = ProgressView(lang="zh")
    expected: list[tuple[Progress, str]] = [
        (Queued(position=1), progress_text(Queued(position=1), "zh") or "?"),
        (ContextLoading(), "正在读取会话上下文…"),
        (Compacting(), "上下文 token 超出预算,正在压缩…"),
        (Retrieving(round=2, query="预算 金额"), "第 2 轮检索:预算 金额"),
        (Assessed(round=2, sufficient=False, missing="预算金额"), "预算金额"),
        (Assessed(round=3, sufficient=True), "资料已充分,准备回答…"),
        (Generating(), "正在根据检索资料生成回答…"),
    ]
    for event, text in expected:
        assert text
        assert view.apply(event)
        shown = view.message().blocks[0]["elements"][0]["text"]
        assert shown.startswith("⏳ ") and text in shown
    view.apply(AnswerDelta("答案" * 3000))
    message = view.message()
    assert check_message({"text": message.text, "blocks": message.blocks}, method="chat.update") == []
    assert "2 question(s) ahead" in str(placeholder_message("en", queued_behind=2).blocks)


def test_the_trace_modal_shows_routing_rounds_stop_reason_and_context() -> None:
    """The modal lists the rewrite and its carried terms, the routing decision, each round's queries, new
    paragraphs (those brought in by reference named), sufficiency and gap."""
    record = _record(
        trace={
            "rewritten": "What is X?",
            "carried": [{"term": "Ops guide", "origin": "citation", "record_id": 7}],
            "mode": "multi",
            "escalated": True,
            "complexity": {
                "source": "classifier",
                "rule_score": 0.4,
                "classifier_probability": 0.81,
                "decision": "multi",
                "reason": "two entities",
            },
            "rounds": [
                {
                    "round": 1,
                    "queries": ["x deadline"],
                    "new_paragraph_ids": ["a", "b"],
                    "referenced_ids": ["b"],
                    "total_evidence": 2,
                    "sufficient": False,
                    "missing": "the budget",
                    "next_queries": ["x budget"],
                }
            ],
            "stop_reason": "no_new_evidence",
            "stop_label_en": "no new evidence",
            "sufficient": False,
            "run_time": 1.2,
            "rerank": {"method": "local", "candidates": 12, "kept": 8},
        },
        context={
            "enabled": True,
            "compacted_rounds": 3,
            "recent_rounds": 1,
            "revision": 2,
            "estimated_tokens": 5000,
            "token_budget": 6000,
            "threshold_exceeded": False,
        },
        engine="extractive",
    )
    view = trace_modal(record)
    assert check_view(view, method="views.open") == []
    text = json.dumps(view["blocks"], ensure_ascii=False)
    for expected in (
        "What is X?",
        "mode: multi",
        "classifier probability: 0.81",
        "x deadline",
        "New paragraphs: 2 (a, b)",
        "Brought in by reference: b",
        "Carried into the search*",
        '\\"Ops guide\\" (from a document the answer of record 7 cited)',
        "Gap: the budget",
        "Next queries: x budget",
        "Stop reason*: no new evidence",
        "turns compacted: 3",
        "estimated tokens / budget: 5000 / 6000",
        "engine: extractive",
        "rerank (kept/candidates): local 8/12",
    ):
        assert expected in text, expected


def test_a_long_trace_is_paginated_within_100_blocks_per_page() -> None:
    """A trace of 200 rounds is split into valid pages with previous/next buttons."""
    rounds = [{"round": i, "queries": [f"q{i}"], "sufficient": False} for i in range(200)]
    record = _record(trace={"rounds": rounds})
    total = len(trace_blocks(record))
    pages = []
    page = 0
    while True:
        view = trace_modal(record, page=page)
        assert check_view(view, method="views.update") == []
        pages.append(view)
        if "kb_trace_page_next" not in json.dumps(view["blocks"][-1]):
            break
        page += 1
    assert len(pages) == -(-total // 98)
    assert "kb_trace_page_prev" in json.dumps(pages[-1]["blocks"][-1])
    assert trace_modal(record, page=99)["private_metadata"] == json.dumps(
        {"record": 7, "page": len(pages) - 1}
    )


def test_an_answer_cannot_disguise_a_link_or_ping_anyone() -> None:
    """A model's labelled link to anywhere shows its URL; its source link keeps the label; pings in the
    answer stay text in the blocks and in the notification text."""
    answer = (
        "<!channel> 领取补贴:[点击这里领取](https://evil.example/login),"
        "详见[报销指南](https://docs.example.com/guide) [1] <@U123> <!subteam^S1|@hr>"
    )
    citations = [{"n": 1, "document": "报销指南", "source": "https://docs.example.com/guide"}]
    [message] = answer_messages(_record(answer, citations=citations))
    body = message.blocks[0]["text"]["text"]
    assert "点击这里领取 (<https://evil.example/login>)" in body
    assert "<https://docs.example.com/guide|报销指南>" in body
    assert "|点击这里领取>" not in body
    everything = json.dumps(message.blocks, ensure_ascii=False) + message.text
    assert "<!channel" not in everything and "<@U123" not in everything and "<!subteam" not in everything
    assert "&lt;!channel" in message.text and "&lt;@U123" in body
