"""Every user-facing Slack string in Chinese, by key (the same keys as en.py).

Keys without a dot are the answer's own messages; ``failure.``, ``home.``, ``trace.`` and ``settings.``
are the failures, the Home tab, the trace modal and `/kb settings`.
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    # progress (docs/design.md#progress-lines-and-the-trace-summary)
    "received": "收到,正在处理…",
    "writing": "正在输出回答…",
    "status": "正在查找资料…",
    # task timeline of a streamed answer
    "task_queued": "等待本话题串中前面的 {n} 个问题",
    "task_context": "读取会话上下文",
    "task_compacting": "压缩会话上下文(超出 token 预算)",
    "task_round": "第 {round} 轮检索:{query}",
    "task_sufficient": "资料已充分",
    "task_missing": "仍缺少:{missing}",
    "task_writing": "根据检索资料生成回答",
    # assistant pane
    "prompts_heading": "可以这样问:",
    "prompt_title": "《{title}》讲了什么",
    "prompt_message": "《{title}》主要讲了什么?请列出要点。",
    # final message
    "sources": "来源",
    "show_trace": "查看检索轨迹",
    "helpful": "👍 有帮助",
    "not_helpful": "👎 没帮助",
    "helpful_label": "这个回答有帮助",
    "not_helpful_label": "这个回答没有帮助",
    "thanks_feedback": "感谢反馈!",
    # failures
    "failed": "⚠️ {message}",
    "interrupted": "⚠️ 回答被中断(服务重启或停止),请重新提问。",
    "no_kb": "这里没有配置知识库,无法回答。请管理员在配置中为本频道关联知识库。",
    "answer_below": "⬇️ 答案见下方",
    "internal_error": "⚠️ 处理问题时出错,请稍后再试。",
    # thread actions
    "compacted": "已压缩 {rounds} 轮问答为摘要(版本 {revision})。",
    "under_budget": "无需压缩:上下文未超出预算(已压缩 {rounds} 轮,版本 {revision})。",
    "no_history": "本会话还没有已回答的问题,无需压缩。",
    "no_older_turns": "没有可压缩的较早轮次:超出预算的是近期原文,它们保持原样。",
    "compact_failed": "压缩失败:{reason}",
    "no_answer_here": "这个会话里还没有我的回答。",
    "not_visible": "无法打开:你不在该会话中,或我无法确认你能看到它。",
    "bad_permalink": "请附上会话中某条消息的链接,例如 /kb trace https://…/archives/C…/p…",
    "trace_ready": "检索轨迹:",
    # trace modal
    "trace_title": "检索轨迹",
    "close": "关闭",
    "next_page": "下一页 ›",
    "previous_page": "‹ 上一页",
    "page": "第 {page}/{pages} 页",
    # a pipeline failure by its code (the pipeline's message arrives in English; Chinese names it)
    "failure.invalid_input": "问题无效,请换一种说法再问。",
    "failure.model_unavailable": "模型服务暂时不可用,请稍后再试。",
    "failure.model_rejected": "模型服务拒绝了请求,请检查模型设置(地址、模型名称、API 密钥)。",
    "failure.model_truncated": "模型输出被截断,结果未被使用。",
    "failure.model_output_invalid": "模型返回的内容无效。",
    "failure.model_error": "模型调用失败,请稍后再试。",
    "failure.knowledge_base_error": "知识库检索失败,请稍后再试。",
    "failure.no_datasets": "这里没有配置知识库,无法回答。",
    "failure.no_knowledge_base": "这里没有配置知识库,无法回答。",
    "failure.internal_error": "处理问题时出错,请稍后再试。",
    "failure.context_conflict": "会话上下文已被其他操作更新,请重试。",
    "failure.interrupted": "回答被中断,请重新提问。",
    "failure.not_found": "没有找到相关内容。",
    "failure.not_allowed": "没有权限执行该操作。",
    "failure.question_too_long": "问题太长:约 {tokens} 个 token,上限为 {limit}。请缩短后再问。",
    # the App Home tab (surfaces/home_view.py)
    "home.title": "kb · 团队知识库",
    "home.intro": "我根据团队的文档回答问题,每个回答都附带编号来源、一行检索摘要和“查看检索轨迹”按钮。",
    "home.datasets": "*我能回答的内容*",
    "home.dataset_line": "• *{name}* — {documents} 个文档,最近入库 {when}",
    "home.never": "未知",
    "home.no_datasets": "知识库里还没有文档。用 `kb ingest` 导入。",
    "home.channels": "*哪些频道搜索哪些知识库*",
    "home.channel_line": "• {channel}:{datasets}",
    "home.everything": "全部知识库",
    "home.nothing": "无(不回答)",
    "home.other_channels": "其他频道与私信",
    "home.mention_only": "(仅在 @ 时回答)",
    "home.how": "*如何提问与追问*",
    "home.how_text": (
        "• 在频道里 @kb 提问,或直接私信我,或在助手面板中提问。\n"
        "• 在同一话题串里直接回复即可追问,无需再 @ 我:我会结合之前的问答理解你的问题。\n"
        "• 很长的话题串会自动压缩为摘要,原始问答不会丢失。"
    ),
    "home.actions": "*话题串操作*",
    "home.actions_text": (
        "• *查看检索轨迹*:回答下方的按钮、消息快捷操作“Show retrieval trace”,或在话题串里输入 `@kb trace`。\n"
        "• *压缩上下文*:消息快捷操作“Compact this thread”,或输入 `@kb compact`。\n"
        "• 👍 / 👎:告诉我回答是否有帮助。\n"
        "• `/kb settings` 查看本频道的配置;`/kb trace <消息链接>` 与 `/kb compact <消息链接>` 可在任意位置使用。"
    ),
    "home.sources": "*同步的来源*",
    "home.source_line": "• *{name}*({kind} → {dataset})— 上次同步 {when}:{result}",
    "home.source_result": "新增 {added},更新 {changed},未变 {unchanged},删除 {removed},跳过 {skipped}",
    "home.source_failed": "失败({reason})",
    "home.source_never": "• *{name}*({kind} → {dataset})— 尚未同步",
    "home.gaps": "*知识库缺少的内容*(仅管理员可见 · 最近 30 天)",
    "home.gap_line": "• *{count} 次* {example}",
    "home.gap_missing": " — 缺少:{missing}",
    "home.gaps_hint": "以不确定提示、无依据的说法或 👎 结束的问题,按主题归组。`kb gaps --html report.html` 可查看全部。",
    "home.no_gaps": "最近 30 天没有缺口:每个回答都有依据,也没有 👎。",
    "home.recent": "*你最近的问题*",
    "home.no_recent": "你还没有问过问题。",
    "home.status_answered": "已回答",
    "home.status_failed": "失败",
    "home.status_interrupted": "已中断",
    "home.status_pending": "处理中",
    "home.more": "……另有 {n} 项未列出",
    # the trace modal's labels (surfaces/trace_modal.py)
    "trace.question": "问题",
    "trace.rewritten": "改写后的问题",
    "trace.routing": "路由",
    "trace.mode": "模式",
    "trace.escalated": "已升级为多轮",
    "trace.decision": "判定",
    "trace.source": "依据",
    "trace.rule_score": "规则分",
    "trace.classifier": "分类器概率",
    "trace.vote": "模型投票",
    "trace.reason": "理由",
    "trace.round": "第 {n} 轮",
    "trace.queries": "查询",
    "trace.new": "新增段落",
    "trace.total": "累计证据",
    "trace.sufficient": "资料充分",
    "trace.gap": "缺口",
    "trace.referenced": "由引用带入",
    "trace.carried": "沿用到检索的词",
    "trace.next": "下一轮查询",
    "trace.stop": "停止原因",
    "trace.context": "上下文",
    "trace.compacted": "已压缩轮数",
    "trace.recent": "保留原文轮数",
    "trace.revision": "摘要版本",
    "trace.tokens": "估算 token / 预算",
    "trace.over": "超出预算",
    "trace.compaction_reason": "压缩原因",
    "trace.disabled": "未使用历史",
    "trace.engine": "引擎",
    "trace.run_time": "检索耗时",
    "trace.rerank": "重排(保留/候选)",
    "trace.yes": "是",
    "trace.no": "否",
    # `/kb help` and `/kb settings` (surfaces/slash_command.py)
    "help": (
        "*/kb* — 知识库机器人\n"
        "• 提问:在频道里 @我(`@kb 如何……`)或私信我;在同一话题串里直接追问。\n"
        "• `/kb settings` — 本频道关联的知识库与检索模式\n"
        "• `/kb compact <消息链接>` — 压缩该话题串的上下文\n"
        "• `/kb trace <消息链接>` — 查看该话题串最新回答的检索轨迹\n"
        "• 在话题串中:使用消息快捷操作“Compact this thread”/“Show retrieval trace”,或输入 `@kb compact` / `@kb trace`。"
    ),
    "settings.reply": (
        "*<#{channel_id}> 的配置*\n"
        "知识库:{datasets}\n"
        "检索模式:{retrieval_mode} · 搜索方式:{search_mode} · 仅在 @ 时回答:{mention_only}"
    ),
    "settings.every_dataset": "(全部知识库)",
    "settings.no_dataset": "(无)",
    "settings.default": "默认",
    "settings.yes": "是",
    "settings.no": "否",
}
