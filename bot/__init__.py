"""Composition root and entry points: settings, the `kb` CLI, wiring and process lifetime."""
