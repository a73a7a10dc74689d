"""Knowledge commands: `kb ingest` (with its progress line), `kb search` and `kb docs`."""
