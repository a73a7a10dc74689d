"""Implementations of core's ports: Chroma, OpenAI-compatible models, SQL stores, embedders, Slack."""
