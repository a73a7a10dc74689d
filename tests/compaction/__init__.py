"""Tests of context compaction: the rolling summary, its watermark, key facts, manual compaction and CLI."""
