"""Synced sources (core.sources): the mirror of their documents as files, and one fetcher per kind."""
