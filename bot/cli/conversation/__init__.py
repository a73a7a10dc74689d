"""Conversation commands (`kb ask`, `history`, `trace`, `chat`, `compact`, `context`), which conversation they use, and their rendering."""
