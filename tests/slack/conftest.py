"""Fixtures for the Slack tests: a running harness whose mock Slack API must see no Block Kit violation."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.slack.harness import SlackHarness


@pytest.fixture
async def slack() -> AsyncIterator[SlackHarness]:
    """A started bot (fake pipeline) against a fresh mock Slack Web API."""
    harness = await SlackHarness().start()
    try:
        yield harness
    finally:
        await harness.close()
        await harness.mock.close()
    assert harness.mock.violations == []
