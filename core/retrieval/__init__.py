"""Retrieval: from a standalone question to the evidence an answer may use.

Multi-hop features and the tiered router (docs/design.md#routing-and-multi-hop-detection), the single
search with its search policy, the bounded retrieve -> assess -> gap-query loop with its stop reasons
(docs/design.md#the-retrieval-loop), the evidence it accumulates, and the one final rerank. Imports
core's shared vocabulary and core.knowledge.
"""
