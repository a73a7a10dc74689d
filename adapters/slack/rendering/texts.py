"""Every user-facing Slack string, in Chinese and English (progress, failures, actions, labels)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from core.text import detect_language

Lang = str  # "zh" | "en"

TEXTS: dict[str, tuple[str, str]] = {
    # progress (docs/design.md#progress-lines-and-the-trace-summary)
    "received": ("收到,正在处理…", "Got it, working on it…"),
    "writing": ("正在输出回答…", "Writing…"),
    "status": ("正在查找资料…", "is searching the knowledge base…"),
    # task timeline of a streamed answer
    "task_queued": ("等待本话题串中前面的 {n} 个问题", "Waiting for {n} earlier question(s) in this thread"),
    "task_context": ("读取会话上下文", "Reading the conversation context"),
    "task_compacting": ("压缩会话上下文(超出 token 预算)", "Compacting the context (over the token budget)"),
    "task_round": ("第 {round} 轮检索:{query}", "Round {round}: “{query}”"),
    "task_sufficient": ("资料已充分", "Evidence is sufficient"),
    "task_missing": ("仍缺少:{missing}", "Still missing: {missing}"),
    "task_writing": ("根据检索资料生成回答", "Writing the answer from the sources"),
    # assistant pane
    "prompts_heading": ("可以这样问:", "Try asking:"),
    "prompt_title": ("《{title}》讲了什么", "About “{title}”"),
    "prompt_message": ("《{title}》主要讲了什么?请列出要点。", "What are the key points of “{title}”?"),
    # final message
    "sources": ("来源", "Sources"),
    "show_trace": ("查看检索轨迹", "Show trace"),
    "helpful": ("👍 有帮助", "👍 Helpful"),
    "not_helpful": ("👎 没帮助", "👎 Not helpful"),
    "helpful_label": ("这个回答有帮助", "This answer was helpful"),
    "not_helpful_label": ("这个回答没有帮助", "This answer was not helpful"),
    "thanks_feedback": ("感谢反馈!", "Thanks for the feedback!"),
    # failures
    "failed": ("⚠️ {message}", "⚠️ {message}"),
    "interrupted": (
        "⚠️ 回答被中断(服务重启或停止),请重新提问。",
        "⚠️ This answer was interrupted (the bot stopped or restarted). Please ask again.",
    ),
    "no_kb": (
        "这里没有配置知识库,无法回答。请管理员在配置中为本频道关联知识库。",
        "No knowledge base is configured here, so I can't answer. Ask an admin to link datasets to this channel.",
    ),
    "answer_below": ("⬇️ 答案见下方", "⬇️ Answer below"),
    "internal_error": (
        "⚠️ 处理问题时出错,请稍后再试。",
        "⚠️ Something went wrong while answering; please try again later.",
    ),
    # thread actions
    "compacted": (
        "已压缩 {rounds} 轮问答为摘要(版本 {revision})。",
        "Compacted {rounds} turn(s) into the summary (revision {revision}).",
    ),
    "under_budget": (
        "无需压缩:上下文未超出预算(已压缩 {rounds} 轮,版本 {revision})。",
        "Nothing to compact: the context is under budget ({rounds} turn(s) compacted so far, revision {revision}).",
    ),
    "no_history": (
        "本会话还没有已回答的问题,无需压缩。",
        "Nothing to compact: this thread has no answered questions yet.",
    ),
    "no_older_turns": (
        "没有可压缩的较早轮次:超出预算的是近期原文,它们保持原样。",
        "Nothing older to compact: only the recent turns are over the budget, and they are kept verbatim.",
    ),
    "compact_failed": ("压缩失败:{reason}", "Compaction failed: {reason}"),
    "no_answer_here": ("这个会话里还没有我的回答。", "I haven't answered anything in this thread yet."),
    "not_visible": (
        "无法打开:你不在该会话中,或我无法确认你能看到它。",
        "Refused: you are not in that conversation, or I can't confirm that you can see it.",
    ),
    "bad_permalink": (
        "请附上会话中某条消息的链接,例如 /kb trace https://…/archives/C…/p…",
        "Please add a link to a message in the thread, e.g. /kb trace https://…/archives/C…/p…",
    ),
    "trace_ready": ("检索轨迹:", "Retrieval trace:"),
    # trace modal
    "trace_title": ("检索轨迹", "Retrieval trace"),
    "close": ("关闭", "Close"),
    "next_page": ("下一页 ›", "Next page ›"),
    "previous_page": ("‹ 上一页", "‹ Previous page"),
    "page": ("第 {page}/{pages} 页", "Page {page}/{pages}"),
}

# Chinese messages for pipeline failures whose text arrives in English (Failed.message).
FAILURE_ZH: dict[str, str] = {
    "invalid_input": "问题无效,请换一种说法再问。",
    "model_unavailable": "模型服务暂时不可用,请稍后再试。",
    "model_truncated": "模型输出被截断,结果未被使用。",
    "model_output_invalid": "模型返回的内容无效。",
    "model_error": "模型调用失败,请稍后再试。",
    "knowledge_base_error": "知识库检索失败,请稍后再试。",
    "no_datasets": "这里没有配置知识库,无法回答。",
    "no_knowledge_base": "这里没有配置知识库,无法回答。",
    "internal_error": "处理问题时出错,请稍后再试。",
    "context_conflict": "会话上下文已被其他操作更新,请重试。",
    "interrupted": "回答被中断,请重新提问。",
    "not_found": "没有找到相关内容。",
    "not_allowed": "没有权限执行该操作。",
}
_TOO_LONG = re.compile(r"about (\d+) tokens, the limit is (\d+)")


def t(key: str, lang: Lang, **values: Any) -> str:
    """The text for key in lang ("zh" or anything else = English), formatted with values."""
    zh, en = TEXTS[key]
    return (zh if lang == "zh" else en).format(**values)


def failure_text(code: str, message: str, details: Mapping[str, Any], lang: Lang) -> str:
    """A pipeline failure in the user's language (details may carry "zh"/"en" texts)."""
    localized = details.get(lang) or details.get(f"message_{lang}")
    if isinstance(localized, str) and localized:
        return localized
    if lang != "zh" or detect_language(message) == "zh":
        return message
    if code == "question_too_long":
        sizes = _TOO_LONG.search(message)
        if sizes:
            return f"问题太长:约 {sizes.group(1)} 个 token,上限为 {sizes.group(2)}。请缩短后再问。"
    return FAILURE_ZH.get(code, message)
