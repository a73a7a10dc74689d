"""Embedders (core.ports.Embedder): the bundled offline multilingual model and OpenAI-compatible endpoints."""
