"""Every user-facing Slack string in English, by key (the same keys as zh.py).

Keys without a dot are the answer's own messages; ``failure.``, ``home.``, ``trace.`` and ``settings.``
are the failures, the Home tab, the trace modal and `/kb settings`.
"""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    # progress (docs/design.md#progress-lines-and-the-trace-summary)
    "received": "Got it, working on it…",
    "writing": "Writing…",
    "status": "is searching the knowledge base…",
    # task timeline of a streamed answer
    "task_queued": "Waiting for {n} earlier question(s) in this thread",
    "task_context": "Reading the conversation context",
    "task_compacting": "Compacting the context (over the token budget)",
    "task_round": "Round {round}: “{query}”",
    "task_sufficient": "Evidence is sufficient",
    "task_missing": "Still missing: {missing}",
    "task_writing": "Writing the answer from the sources",
    # assistant pane
    "prompts_heading": "Try asking:",
    "prompt_title": "About “{title}”",
    "prompt_message": "What are the key points of “{title}”?",
    # final message
    "sources": "Sources",
    "show_trace": "Show trace",
    "helpful": "👍 Helpful",
    "not_helpful": "👎 Not helpful",
    "helpful_label": "This answer was helpful",
    "not_helpful_label": "This answer was not helpful",
    "thanks_feedback": "Thanks for the feedback!",
    # failures
    "failed": "⚠️ {message}",
    "interrupted": "⚠️ This answer was interrupted (the bot stopped or restarted). Please ask again.",
    "no_kb": "No knowledge base is configured here, so I can't answer. Ask an admin to link datasets to this channel.",
    "answer_below": "⬇️ Answer below",
    "internal_error": "⚠️ Something went wrong while answering; please try again later.",
    # thread actions
    "compacted": "Compacted {rounds} turn(s) into the summary (revision {revision}).",
    "under_budget": "Nothing to compact: the context is under budget ({rounds} turn(s) compacted so far, revision {revision}).",
    "no_history": "Nothing to compact: this thread has no answered questions yet.",
    "no_older_turns": "Nothing older to compact: only the recent turns are over the budget, and they are kept verbatim.",
    "compact_failed": "Compaction failed: {reason}",
    "no_answer_here": "I haven't answered anything in this thread yet.",
    "not_visible": "Refused: you are not in that conversation, or I can't confirm that you can see it.",
    "bad_permalink": "Please add a link to a message in the thread, e.g. /kb trace https://…/archives/C…/p…",
    "trace_ready": "Retrieval trace:",
    # trace modal
    "trace_title": "Retrieval trace",
    "close": "Close",
    "next_page": "Next page ›",
    "previous_page": "‹ Previous page",
    "page": "Page {page}/{pages}",
    # a pipeline failure by its code: the pipeline's message arrives in English and is shown as it is
    "failure.invalid_input": "{message}",
    "failure.model_unavailable": "{message}",
    "failure.model_rejected": "{message}",
    "failure.model_truncated": "{message}",
    "failure.model_output_invalid": "{message}",
    "failure.model_error": "{message}",
    "failure.knowledge_base_error": "{message}",
    "failure.no_datasets": "{message}",
    "failure.no_knowledge_base": "{message}",
    "failure.internal_error": "{message}",
    "failure.context_conflict": "{message}",
    "failure.interrupted": "{message}",
    "failure.not_found": "{message}",
    "failure.not_allowed": "{message}",
    "failure.question_too_long": "{message}",
    # the App Home tab (surfaces/home_view.py)
    "home.title": "kb · your team's knowledge base",
    "home.intro": "I answer questions from your team's documents. Every answer lists numbered sources, a one-line summary of how it was found, and a *Show trace* button.",
    "home.datasets": "*What I can answer*",
    "home.dataset_line": "• *{name}* — {documents} document(s), last ingested {when}",
    "home.never": "unknown",
    "home.no_datasets": "The knowledge base is empty: add documents with `kb ingest`.",
    "home.channels": "*Which channels search what*",
    "home.channel_line": "• {channel}: {datasets}",
    "home.everything": "every dataset",
    "home.nothing": "none (I don't answer there)",
    "home.other_channels": "Other channels and DMs",
    "home.mention_only": " (mentions only)",
    "home.how": "*How to ask and follow up*",
    "home.how_text": (
        "• Mention @kb in a channel, write to me directly, or ask in the assistant pane.\n"
        "• Reply in the same thread to follow up without mentioning me again: I read the earlier turns.\n"
        "• Long threads are compacted into a summary automatically; the original turns are kept."
    ),
    "home.actions": "*Thread actions*",
    "home.actions_text": (
        "• *Show the retrieval trace*: the button under an answer, the message shortcut *Show retrieval trace*, or type `@kb trace` in the thread.\n"
        "• *Compact the context*: the message shortcut *Compact this thread*, or type `@kb compact`.\n"
        "• 👍 / 👎 tell me whether an answer helped.\n"
        "• `/kb settings` shows a channel's scope; `/kb trace <message link>` and `/kb compact <message link>` work from anywhere."
    ),
    "home.sources": "*Synced sources*",
    "home.source_line": "• *{name}* ({kind} → {dataset}) — last sync {when}: {result}",
    "home.source_result": "{added} new, {changed} changed, {unchanged} unchanged, {removed} removed, {skipped} skipped",
    "home.source_failed": "failed ({reason})",
    "home.source_never": "• *{name}* ({kind} → {dataset}) — not synced yet",
    "home.gaps": "*What the knowledge base is missing* (admins only · last 30 days)",
    "home.gap_line": "• *{count}×* {example}",
    "home.gap_missing": " — missing: {missing}",
    "home.gaps_hint": "Questions that ended unsure, with an unsupported claim or a 👎, grouped by topic. `kb gaps --html report.html` gives all of them.",
    "home.no_gaps": "No gaps in the last 30 days: every answer was supported and none got a 👎.",
    "home.recent": "*Your recent questions*",
    "home.no_recent": "You haven't asked anything yet.",
    "home.status_answered": "answered",
    "home.status_failed": "failed",
    "home.status_interrupted": "interrupted",
    "home.status_pending": "in progress",
    "home.more": "… and {n} more",
    # the trace modal's labels (surfaces/trace_modal.py)
    "trace.question": "Question",
    "trace.rewritten": "Rewritten question",
    "trace.routing": "Routing",
    "trace.mode": "mode",
    "trace.escalated": "escalated to multi-hop",
    "trace.decision": "decision",
    "trace.source": "decided by",
    "trace.rule_score": "rule score",
    "trace.classifier": "classifier probability",
    "trace.vote": "model vote",
    "trace.reason": "reason",
    "trace.round": "Round {n}",
    "trace.queries": "Queries",
    "trace.new": "New paragraphs",
    "trace.total": "Evidence so far",
    "trace.sufficient": "Sufficient",
    "trace.gap": "Gap",
    "trace.referenced": "Brought in by reference",
    "trace.carried": "Carried into the search",
    "trace.next": "Next queries",
    "trace.stop": "Stop reason",
    "trace.context": "Context",
    "trace.compacted": "turns compacted",
    "trace.recent": "recent turns kept",
    "trace.revision": "summary revision",
    "trace.tokens": "estimated tokens / budget",
    "trace.over": "over budget",
    "trace.compaction_reason": "compaction",
    "trace.disabled": "history disabled",
    "trace.engine": "engine",
    "trace.run_time": "retrieval time",
    "trace.rerank": "rerank (kept/candidates)",
    "trace.yes": "yes",
    "trace.no": "no",
    # `/kb help` and `/kb settings` (surfaces/slash_command.py)
    "help": (
        "*/kb* — the knowledge-base bot\n"
        "• Ask: mention me in a channel (`@kb how do I …`) or write to me directly; reply in the thread to follow up.\n"
        "• `/kb settings` — this channel's knowledge bases and retrieval mode\n"
        "• `/kb compact <message link>` — compact that thread's context\n"
        "• `/kb trace <message link>` — show how that thread's latest answer was found\n"
        "• In a thread: the message shortcuts *Compact this thread* / *Show retrieval trace*, or type `@kb compact` / `@kb trace`."
    ),
    "settings.reply": (
        "*Settings for <#{channel_id}>*\n"
        "Knowledge bases: {datasets}\n"
        "Retrieval mode: {retrieval_mode} · search mode: {search_mode} · mention only: {mention_only}"
    ),
    "settings.every_dataset": "(every dataset)",
    "settings.no_dataset": "(none)",
    "settings.default": "default",
    "settings.yes": "yes",
    "settings.no": "no",
}
