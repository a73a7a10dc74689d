"""Test suite of the knowledge-base bot."""
