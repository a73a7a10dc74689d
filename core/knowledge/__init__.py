"""Knowledge: how documents become chunks and how a search is asked for.

Chunking (Markdown sections, law articles, token windows), the idempotent ingest plan over the
DocumentIndex port, and the search vocabulary (modes, thresholds, query-length tiers, fusion and merging
across embedding groups). Imports only core's shared vocabulary (models, ports, errors, budget, text).
"""
