"""Labelled examples: JSONL with validation and the split, rule features, template generation, importers, review."""
