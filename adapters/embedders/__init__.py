"""Embedders (core.ports.Embedder): the bundled offline multilingual models (USE, e5) and OpenAI-compatible
endpoints."""
