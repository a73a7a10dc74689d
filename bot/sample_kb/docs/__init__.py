"""Marks the sample documents as package data so a regular (non-editable) install ships the .md files."""
