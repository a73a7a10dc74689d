"""Tests of `kb eval`: the question format, matching, aggregation, reports and the command itself."""
