"""Tests of the question pipeline with in-memory fakes of its ports."""
