"""Conversation: what the bot remembers of a thread and how it stays within budget.

Bounded history (docs/design.md#bounded-history), the rolling summary with its watermark and batches
(docs/design.md#compaction) with the key-facts line, and the in-process per-conversation lock. Imports only
core's shared vocabulary (models, ports, errors, events, budget, text).
"""
