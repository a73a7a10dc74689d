"""Tests of the extractive engine (every model role without a model) and the sample knowledge base."""
