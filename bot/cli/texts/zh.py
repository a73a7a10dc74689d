"""The `kb` command line's own user-facing text in Chinese, by key (the same keys as en.py)."""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    # the error path (bot/cli/outcome.py)
    "interrupted": "已中断。",
    "interrupted_record": "已中断;记录 {record} 已标记为中断 — 用 `kb ask --again {record}` 重试",
    "internal_error": "error: 内部错误({detail});加 -v 查看详情。",
    # bad input and unknown names
    "error.home_is_a_file": "KB_HOME {path} 是一个文件,不是文件夹:请把 KB_HOME 设为一个文件夹。",
    "error.home_under_a_file": "无法创建 KB_HOME {path}:路径中的某一段是文件。",
    "error.home_not_writable": "KB_HOME {path} 不可写:请选择一个有写权限的文件夹。",
    "error.home_os_error": "无法使用 KB_HOME {path}:{detail}。",
    "error.name_a_dataset": "请用 --dataset 指定知识库(或设置 KB_DATASETS);现有:{known}",
    "error.empty_dataset_name": "知识库名称不能为空。",
    "error.no_such_path": "文件或文件夹不存在:{names}",
    "error.ingested_with_other_model": "知识库「{dataset}」使用 {built_with} 建立,不能改用 {model}。",
    "error.ambiguous_document": "有多个文档名为「{key}」,请用 id:{ids}",
    "error.no_such_document": "找不到文档「{key}」。",
    "error.bad_conversation_name": "会话名称不能为空,也不能包含冒号。",
    "error.conversation_and_name": "--conversation 与 --name 只能选一个。",
    "error.no_such_dataset": "知识库不存在:{unknown}(现有:{available})",
    "error.no_dataset_yet": "还没有任何知识库:先用 `kb ingest 路径 --dataset 名称` 导入文档。",
    "error.rebuild_failed": "知识库「{dataset}」无法重建:{reason} 可用 `kb datasets drop {name}` 删除后重新导入。",
    "error.record_elsewhere": "记录 {record} 不属于会话 {named}(它属于 {conversation})。",
    "error.again_with_question": "--again 会重新回答记录里保存的问题,不要再给出问题。",
    # `kb trace`: the rewrite and the context line
    "trace.rewritten": "改写后的问题: {rewritten}",
    "trace.attribution.corrected": "引用已更正为 {where}：「{sentence}」",
    "trace.attribution.added": "已补上引用 {where}：「{sentence}」",
    "trace.attribution.removed": "已删去引用，没有资料支持：「{sentence}」",
    "trace.attribution.none": "没有资料支持：「{sentence}」",
    "trace.attribution.by_meaning": "（按语义，相似度 {similarity}）",
    "trace.supplied": "回答没有涉及「{part}」，已摘录 {where}：「{sentence}」",
    "trace.unsupported.number": "资料中找不到数字 {claim} — 出自「{sentence}」",
    "trace.unsupported.name": "资料中找不到名称 {claim} — 出自「{sentence}」",
    "context.disabled": "上下文: 未使用历史",
    "context.line": "上下文: {parts}",
    "context.recent": "近期 {recent} 轮原文",
    "context.compacted": "摘要含 {compacted} 轮",
    "context.tokens": "约 {tokens}/{budget} token",
    "context.compacted_now": "本次已压缩",
    "context.compaction_failed": "压缩失败: {error}",
}
