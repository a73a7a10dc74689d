"""Synced sources: knowledge kept elsewhere (Slack channels, exports) brought into a dataset and kept current.

A source yields documents with stable keys; a sync writes the new and changed ones, keeps the unchanged
and removes the gone (see docs/sources.md). Imports only core's shared vocabulary and core.knowledge.
"""
