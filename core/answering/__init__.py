"""Answering: the model roles and the grounded answer, and how a run is shown to people.

Prompts, the model-role engine over a ChatModel, the answer's delimited evidence block with citations,
sources and notices, streaming with fallback, the per-question ledger, and the progress lines, trace
summary and trace view every front end renders. Imports only core's shared vocabulary.
"""
