"""Tests of the knowledge base: document reading, chunking, search logic, store and CLI."""
