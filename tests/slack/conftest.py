"""Fixtures for the Slack tests: a running harness whose mock Slack API must see no Block Kit violation."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.slack.harness import SlackHarness


@pytest.fixture
async def slack() -> AsyncIterator[SlackHarness]:
    """A started bot (fake pipeline) against a fresh mock Slack Web API."""
    async with SlackHarness.running() as harness:
        yield harness
