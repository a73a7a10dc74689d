"""Tests that run the `kb` command line as a user would."""
