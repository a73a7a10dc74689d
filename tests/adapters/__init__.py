"""Adapter tests: each adapter against the real thing at its boundary (SQLite files, local PostgreSQL, ...)."""
