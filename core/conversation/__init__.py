"""Conversation: what the bot remembers of a thread and how it stays within budget.

Bounded history (seed 004), the rolling summary with its watermark and batches (seed 002) with the
key-facts line, and the in-process per-conversation lock. Imports only
core's shared vocabulary (models, ports, errors, events, budget, text).
"""
