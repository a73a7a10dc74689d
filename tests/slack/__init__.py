"""Tests of the Slack face: the real Bolt AsyncApp and AsyncWebClient against a local mock Slack Web API."""
